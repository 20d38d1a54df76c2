// Dropped connections and restarts (DESIGN §6, §8 aether): tails and consumers reconnect with
// backoff and resume from the last delivered offset; producing through CLIENT KILLs stores every
// record exactly once (idempotent appends).
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { open, type Message, type Twain } from '../../../src/index.js'
import { RedisServer } from '../../helpers/redis-server.js'
import { until } from '../../helpers/spawn.js'
import { sleep } from '../../helpers/wait.js'

/** Kill every normal client connection (not the admin's own) every `everyMs` until stopped; counts kills. */
function killer(admin: Redis, everyMs: number): { stop: () => Promise<number> } {
  let running = true
  let kills = 0
  const loop = (async () => {
    while (running) {
      await sleep(everyMs)
      kills += Number(await admin.call('CLIENT', 'KILL', 'TYPE', 'normal').catch(() => 0))
    }
  })()
  return {
    stop: async () => {
      running = false
      await loop
      return kills
    },
  }
}

/** Collect a tail's messages in the background. */
function collect(twain: Twain, topic: string): { got: Message<number>[]; stop: () => Promise<void> } {
  const got: Message<number>[] = []
  const stream = twain.tail<number>(topic, { from: 'start' })
  const loop = (async () => {
    for await (const m of stream) got.push(m)
  })()
  return {
    got,
    stop: async () => {
      await stream.close()
      await loop
    },
  }
}

const expectExactlyOnce = (got: Message<number>[], n: number) => {
  expect(got.map((m) => m.value)).toEqual(Array.from({ length: n }, (_, i) => i))
  expect(got.map((m) => m.offset)).toEqual(Array.from({ length: n }, (_, i) => i))
}

describe('CLIENT KILL', () => {
  let server: RedisServer
  let admin: Redis
  beforeAll(async () => {
    server = await RedisServer.start()
    admin = new Redis({ port: server.port, host: '127.0.0.1', protocol: 2 })
  })
  afterAll(async () => {
    admin.disconnect()
    await server.destroy()
  })

  it('a tail survives repeated kills of its connections: nothing lost, nothing repeated', async () => {
    const reader = await open(server.url, { prefix: 'k1:' })
    const writer = await open(server.url, { prefix: 'k1:' })
    try {
      await writer.createTopic('t')
      const tail = collect(reader, 't')
      const kill = killer(admin, 60)
      const p = writer.producer<number>('t')
      for (let i = 0; i < 400; i++) {
        await p.send(i, i)
        if (i % 4 === 0) await sleep(2)
      }
      const kills = await kill.stop()
      expect(kills).toBeGreaterThan(5)
      await until(() => tail.got.length >= 400, 15_000, `400 tailed messages (have ${tail.got.length})`)
      await sleep(200) // no duplicate arrives late (within 200 ms)
      await tail.stop()
      expectExactlyOnce(tail.got, 400)
    } finally {
      await Promise.all([reader.close(), writer.close()])
    }
  }, 40_000)

  it('producing through repeated kills stores every record exactly once, with the offsets send() reported', async () => {
    const twain = await open(server.url, { prefix: 'k2:' })
    try {
      await twain.createTopic('t', { partitions: 3 })
      const p = twain.producer<number>('t')
      const kill = killer(admin, 25)
      const results: Array<{ partition: number; offset: number; value: number }> = []
      let next = 0
      for (let round = 0; round < 20; round++) {
        if (round % 2 === 0) {
          const values = Array.from({ length: 150 }, () => next++)
          const rs = await Promise.all(values.map((v) => p.send(v, v)))
          rs.forEach((r, i) => results.push({ ...r, value: values[i] as number }))
        } else {
          const values = Array.from({ length: 2500 }, () => next++) // more than one script call per partition
          const rs = await p.sendBatch(values.map((v) => ({ key: v % 65536, value: v, partition: v % 3 })))
          rs.forEach((r, i) => results.push({ ...r, value: values[i] as number }))
        }
      }
      const kills = await kill.stop()
      expect(kills).toBeGreaterThan(10)
      const stored: Message<number>[] = []
      for await (const m of twain.history<number>('t')) stored.push(m)
      expect(stored).toHaveLength(next)
      expect(new Set(stored.map((m) => m.value)).size).toBe(next)
      for (const part of [0, 1, 2]) {
        const offs = stored.filter((m) => m.partition === part).map((m) => m.offset)
        expect(offs).toEqual(offs.map((_, i) => i))
      }
      const at = new Map(stored.map((m) => [`${m.partition}:${m.offset}`, m.value]))
      for (const r of results) expect(at.get(`${r.partition}:${r.offset}`)).toBe(r.value)
    } finally {
      await twain.close()
    }
  }, 60_000)

  it('a consumer group goes on through kills: every message acked, committed to the end', async () => {
    const twain = await open(server.url, { prefix: 'k3:' })
    try {
      await twain.createTopic('t', { partitions: 2 })
      const c = twain.consumer<number>('t', {
        group: 'g',
        sessionTimeoutMs: 5000,
        heartbeatIntervalMs: 100,
        commitIntervalMs: 50,
      })
      c.on('error', () => undefined) // heartbeats and commits cut by a kill are retried
      const seen: number[] = []
      const loop = (async () => {
        for await (const m of c) {
          seen.push(m.value)
          m.ack()
        }
      })()
      const kill = killer(admin, 80)
      const p = twain.producer<number>('t')
      for (let i = 0; i < 300; i++) {
        await p.send(i, i)
        if (i % 10 === 0) await sleep(5)
      }
      await kill.stop()
      await until(() => new Set(seen).size >= 300, 15_000, `300 consumed (have ${new Set(seen).size})`)
      await until(
        async () => (await twain.describeGroup('g')).topics.every((t) => t.lag === 0),
        10_000,
        'commits to the end',
      )
      expect(new Set(seen).size).toBe(300)
      await c.close()
      await loop
    } finally {
      await twain.close()
    }
  }, 40_000)
})

describe('server restart (AOF)', () => {
  let server: RedisServer
  beforeAll(async () => {
    server = await RedisServer.start({ aof: true })
  })
  afterAll(async () => {
    await server.destroy()
  })

  it('a tail resumes after a restart; a send issued while the server is down completes after it', async () => {
    const reader = await open(server.url, { prefix: 'r1:' })
    const writer = await open(server.url, { prefix: 'r1:' })
    try {
      await writer.createTopic('t')
      const tail = collect(reader, 't')
      const p = writer.producer<number>('t')
      for (let i = 0; i < 100; i++) await p.send(i, i)
      await until(() => tail.got.length === 100, 10_000, '100 before the restart')
      await server.stop()
      const during = p.send(100, 100)
      await sleep(500) // time is the subject: the server stays down for 500 ms
      await server.restart()
      expect(await during).toEqual({ partition: 0, offset: 100 })
      for (let i = 101; i < 200; i++) await p.send(i, i)
      await until(() => tail.got.length >= 200, 15_000, `200 tailed (have ${tail.got.length})`)
      await sleep(200) // no duplicate arrives late (within 200 ms)
      await tail.stop()
      expectExactlyOnce(tail.got, 200)
      expect((await reader.describeTopic('t')).offsets).toEqual([{ partition: 0, start: 0, end: 200 }])
    } finally {
      await Promise.all([reader.close(), writer.close()])
    }
  }, 40_000)
})
