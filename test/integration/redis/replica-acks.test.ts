// `replicaAcks` on one Redis with a replica (issue 12): a send resolves once the replica holds its
// batch; when the replica does not acknowledge within `replicaAckTimeoutMs` the send rejects with a
// retriable TimeoutError saying so, and sends to the same store go on once the replica is back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { InvalidArgumentError, open, TimeoutError } from '../../../src/index.js'
import { RedisServer } from '../../helpers/redis-server.js'
import { tempDir } from '../../helpers/tmp.js'
import { until } from '../../helpers/wait.js'
import { Redis } from 'ioredis'
import { hostname } from 'node:os'
import { backendOf } from '../../../src/facade/twain.js'

let master: RedisServer
let replica: RedisServer
let lonely: RedisServer

beforeAll(async () => {
  ;[master, lonely] = await Promise.all([RedisServer.start(), RedisServer.start()])
  replica = await RedisServer.start({ args: ['--replicaof', '127.0.0.1', String(master.port)] })
  const admin = new Redis({ port: replica.port, host: '127.0.0.1', protocol: 2 })
  try {
    await until(
      async () => String(await admin.info('replication')).includes('master_link_status:up'),
      10_000,
      'the replica linked',
    )
  } finally {
    admin.disconnect()
  }
}, 30_000)
afterAll(async () => {
  await Promise.all([replica?.destroy(), master?.destroy(), lonely?.destroy()])
})

describe('replicaAcks', () => {
  it('a send resolves once the replica holds it; the replica has it', async () => {
    const twain = await open(master.url, { prefix: 'a:', replicaAcks: 1 })
    try {
      await twain.createTopic('t', { partitions: 2 })
      const sent = await Promise.all(Array.from({ length: 50 }, (_, i) => twain.producer<string>('t').send(i, `v${i}`)))
      expect(sent).toHaveLength(50)
      const copy = await open(replica.url, { prefix: 'a:' }) // read the replica directly
      try {
        const offsets = (await copy.describeTopic('t')).offsets
        expect(offsets.reduce((n, o) => n + o.end, 0)).toBe(50)
      } finally {
        await copy.close()
      }
    } finally {
      await twain.close()
    }
  })

  it('a replica that does not answer: the send rejects with a retriable TimeoutError after replicaAckTimeoutMs; sends succeed again once it is back', async () => {
    const twain = await open(master.url, { prefix: 'b:', replicaAcks: 1, replicaAckTimeoutMs: 300 })
    try {
      await twain.createTopic('t')
      const producer = twain.producer<string>('t')
      await producer.send(1, 'before')
      replica.pause(true)
      let e: unknown
      try {
        const t0 = performance.now()
        e = await producer.send(1, 'unacknowledged').then(
          () => undefined,
          (x: unknown) => x,
        )
        expect(performance.now() - t0).toBeGreaterThanOrEqual(250)
      } finally {
        replica.pause(false)
      }
      expect(e).toBeInstanceOf(TimeoutError)
      expect(e).toMatchObject({
        retriable: true,
        // Either the master's WAIT answered with 0 replicas, or (a loaded machine) the deadline passed before it answered.
        message: expect.stringMatching(
          /(acknowledged by 0 of 1 replica|not acknowledged by 1 replica) within 300 ms \(replicaAcks\)/,
        ),
      })
      await expect(producer.send(1, 'after')).resolves.toMatchObject({ partition: 0 })
    } finally {
      await twain.close()
    }
  })

  it('a group commit counts once the replica holds it: with the replica paused it is not acknowledged (a processor carries commits into its outputs)', async () => {
    const twain = await open(master.url, { prefix: 'd:', replicaAcks: 1, replicaAckTimeoutMs: 300 })
    try {
      await twain.createTopic('t')
      const groups = backendOf(twain).groups
      const member = {
        id: 'm1',
        name: 'm1',
        topics: ['t'],
        sessionTimeoutMs: 30_000,
        pid: process.pid,
        host: hostname(),
      }
      const [lease] = (await groups.groupHeartbeat('g', member, [])).owned
      if (!lease) throw new Error('no lease')
      const commit = (offset: number) => groups.groupCommit('g', 'm1', [{ ...lease, offset }])
      await expect(commit(1)).resolves.toEqual([])
      replica.pause(true)
      let e: unknown
      try {
        e = await commit(2).then(
          () => undefined,
          (x: unknown) => x,
        )
      } finally {
        replica.pause(false)
      }
      expect(e).toBeInstanceOf(TimeoutError)
      expect(String(e)).toMatch(/acknowledged by 0 of 1 replica/)
      await expect(commit(3)).resolves.toEqual([])
    } finally {
      await twain.close()
    }
  })

  it('a master without replicas: every send and every creation rejects with TimeoutError', async () => {
    const plain = await open(lonely.url, { prefix: 'c:' })
    const twain = await open(lonely.url, { prefix: 'c:', replicaAcks: 1, replicaAckTimeoutMs: 50 })
    try {
      await plain.createTopic('t')
      await expect(twain.producer<string>('t').send(1, 'x')).rejects.toBeInstanceOf(TimeoutError)
      // A creation waits for replicas too (decision 220): refused, and its claim on the name given up.
      await expect(twain.createTopic('u')).rejects.toThrow(
        /Cannot create topic "u": partition 0: acknowledged by 0 of 1 replica/,
      )
      await expect(twain.createTopic('u')).rejects.toBeInstanceOf(TimeoutError)
      expect(await plain.listTopics()).toEqual(['t'])
      await plain.createTopic('u')
      expect((await plain.describeTopic('u')).partitions).toBe(1)
    } finally {
      await twain.close()
      await plain.close()
    }
  })

  it('bad values and a file target are InvalidArgumentErrors naming the value', async () => {
    await expect(open(master.url, { replicaAcks: -1 })).rejects.toThrow(
      /replicaAcks must be an integer 0\.\.64, got -1/,
    )
    await expect(open(master.url, { replicaAcks: 1, replicaAckTimeoutMs: 0 })).rejects.toThrow(
      /replicaAckTimeoutMs must be an integer 1\.\.600000, got 0/,
    )
    const tmp = tempDir()
    try {
      await expect(open(tmp.dir, { replicaAcks: 1 })).rejects.toBeInstanceOf(InvalidArgumentError)
      await expect(open(tmp.dir, { replicaAcks: 1 })).rejects.toThrow(
        /does not take the option replicaAcks: 1: it is for Redis targets/,
      )
    } finally {
      tmp.remove()
    }
  })
})
