// Placement and connections on a real 3-master Redis Cluster (issue 12): every key of a partition
// in one slot on the master serving it, group keys in their group's slot, deleteTopic leaves nothing
// on any master, partitions spread evenly over the masters, topics without placement (created before
// it) still readable, and a 96-partition tail bounded in connections.
import { randomBytes } from 'node:crypto'
import type { Cluster } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { keySlot } from '../../../src/backends/redis/key-slot.js'
import { open, type Twain } from '../../../src/index.js'
import { RedisCluster } from '../../helpers/redis-cluster.js'
import { streamKeyOf } from '../../helpers/redis-keys.js'
import type { RedisServer } from '../../helpers/redis-server.js'
import { until } from '../../helpers/wait.js'
import { backendOf } from '../../../src/facade/twain.js'

let cluster: RedisCluster
let masters: RedisServer[]
beforeAll(async () => {
  cluster = await RedisCluster.start()
  masters = await cluster.masters()
}, 60_000)
afterAll(async () => {
  await cluster?.destroy()
})

/** Every key under `prefix` on every master, with the master it is on. */
const keysOnMasters = (prefix: string): Promise<Array<{ key: string; node: RedisServer }>> =>
  cluster.keysOn(masters, prefix)

/** How many of a topic's partitions each master serves. */
async function spread(twain: Twain, topic: string, partitions: number): Promise<number[]> {
  const counts = new Map<RedisServer, number>(masters.map((m) => [m, 0]))
  for (let p = 0; p < partitions; p++) {
    const m = await cluster.masterOf(keySlot(await streamKeyOf(twain, topic, p)))
    counts.set(m, (counts.get(m) ?? 0) + 1)
  }
  return [...counts.values()]
}

describe('placement on a 3-master cluster', () => {
  let twain: Twain
  let prefix: string
  beforeAll(async () => {
    prefix = `p${randomBytes(4).toString('hex')}:`
    twain = await open(cluster.url, { prefix })
  })
  afterAll(async () => {
    await twain?.close()
  })

  it('spreads partitions evenly: max - min <= 1 per topic, for any partition count', async () => {
    for (const [topic, n] of [
      ['t', 12],
      ['orders', 12],
      ['a', 5],
      ['b', 7],
      ['c', 1],
      ['d', 96],
    ] as const) {
      await twain.createTopic(topic, { partitions: n })
      const counts = await spread(twain, topic, n)
      expect(counts.reduce((s, c) => s + c, 0)).toBe(n)
      expect(Math.max(...counts) - Math.min(...counts), `${topic}: ${counts.join('/')}`).toBeLessThanOrEqual(1)
    }
  })

  it('keeps every key of a partition in its slot on the master serving it, group keys in their group slot; deleteTopic leaves nothing', async () => {
    await twain.createTopic('k', { partitions: 12 })
    const producer = twain.producer<string>('k')
    for (let p = 0; p < 12; p++) await producer.send(p, `v${p}`, { partition: p })
    const c = twain.consumer<string>('k', { group: 'billing', sessionTimeoutMs: 3000, heartbeatIntervalMs: 200 })
    let seen = 0
    for await (const m of c) {
      m.ack()
      if (++seen === 12) break
    }
    await c.commit()
    await c.close()
    const shared = twain.consumer<string>('k', { group: 'ship', mode: 'shared' })
    let got = 0
    for await (const m of shared) {
      m.ack()
      if (++got === 12) break
    }
    await shared.close()

    const streams = await Promise.all(Array.from({ length: 12 }, (_, p) => streamKeyOf(twain, 'k', p)))
    const keys = (await keysOnMasters(prefix)).filter(
      ({ key }) =>
        streams.some((s) => key === s || key.startsWith(`${s}:`)) ||
        key.includes('{billing}') ||
        key.includes('{ship}'),
    )
    for (let p = 0; p < 12; p++) {
      const own = keys.filter(({ key }) => key === streams[p] || key.startsWith(`${streams[p]}:`))
      expect(own.map(({ key }) => key.slice((streams[p] as string).length)).sort()).toEqual(
        expect.arrayContaining(['', ':end', ':g:billing']),
      )
      const slot = keySlot(streams[p] as string)
      const master = await cluster.masterOf(slot)
      for (const { key, node } of own) {
        expect(keySlot(key), key).toBe(slot)
        expect(node, key).toBe(master)
      }
    }
    const groupKeys = keys.filter(({ key }) => key.includes('{billing}'))
    expect(groupKeys.length).toBeGreaterThan(0)
    for (const { key } of groupKeys) expect(keySlot(key), key).toBe(keySlot('{billing}'))

    await twain.deleteTopic('k')
    const left = (await keysOnMasters(prefix))
      .map(({ key }) => key)
      .filter((key) => key === `${prefix}k:meta` || streams.some((s) => key === s || key.startsWith(`${s}:`)))
    expect(left).toEqual([])
  })

  it('still reads and writes a topic created without placement (layout {<topic>:<partition>})', async () => {
    const client = (backendOf(twain) as unknown as { client: Cluster }).client
    // What an older twainmq wrote: a meta without `tags`, and `{old:<p>}:end` per partition.
    await client.hset(
      `${prefix}old:meta`,
      'name',
      'old',
      'partitions',
      '3',
      'keyType',
      'string',
      'messageTypes',
      '[]',
      'retention',
      '{}',
      'maxMessageBytes',
      String(1024 * 1024),
      'createdAt',
      String(Date.now()),
      'state',
      'ready',
    )
    for (let p = 0; p < 3; p++) await client.set(`${prefix}{old:${p}}:end`, '0')
    await client.sadd(`${prefix}topics`, 'old')
    const other = await open(cluster.url, { prefix })
    try {
      for (let p = 0; p < 3; p++) await other.producer<string>('old').send('k', `o${p}`, { partition: p })
      for (let p = 0; p < 3; p++) expect(await client.xlen(`${prefix}{old:${p}}`)).toBe(1)
      const values: string[] = []
      for await (const m of other.history<string>('old')) values.push(m.value)
      expect(values.sort()).toEqual(['o0', 'o1', 'o2'])
    } finally {
      await other.close()
    }
  })
})

describe('connections on a 3-master cluster', () => {
  /** Connections named by twainmq on every node (masters and replicas). */
  async function twainConnections(): Promise<number> {
    let n = 0
    for (const node of cluster.nodes) {
      const list = String(await cluster.admin(node).client('LIST'))
      n += list.split('\n').filter((l) => / name=twainmq/.test(l)).length
    }
    return n
  }

  it('a 96-partition tail uses <= 12 connections per process and delivers from every partition', async () => {
    const prefix = `n${randomBytes(4).toString('hex')}:`
    const before = await twainConnections()
    const twain = await open(cluster.url, { prefix })
    try {
      await twain.createTopic('wide', { partitions: 96 })
      const it = twain.tail<string>('wide')[Symbol.asyncIterator]()
      const first = it.next()
      let blocked = 0
      await until(
        async () => {
          blocked = 0
          for (const m of masters)
            blocked += String(await cluster.admin(m).client('LIST'))
              .split('\n')
              .filter((l) => / cmd=xread /.test(l) && / name=twainmq:tail/.test(l)).length
          return blocked === 3
        },
        10_000,
        'one blocked read per master',
      )
      const used = (await twainConnections()) - before
      expect(used, `${used} connections`).toBeLessThanOrEqual(12)
      const producer = twain.producer<string>('wide')
      await Promise.all(Array.from({ length: 96 }, (_, p) => producer.send(p, `w${p}`, { partition: p })))
      const seen = new Set<number>([(await first).value.partition])
      while (seen.size < 96) seen.add((await it.next()).value.partition)
      expect(seen.size).toBe(96)
      expect((await twainConnections()) - before).toBeLessThanOrEqual(12)
      await it.return?.()
    } finally {
      await twain.close()
    }
  })

  it('a shared-group member over 24 partitions blocks in one XREADGROUP per master, and gets new entries', async () => {
    const prefix = `s${randomBytes(4).toString('hex')}:`
    const twain = await open(cluster.url, { prefix })
    try {
      await twain.createTopic('jobs', { partitions: 24 })
      const c = twain.consumer<string>('jobs', { group: 'workers', mode: 'shared' })
      const it = c[Symbol.asyncIterator]()
      const first = it.next()
      const blockedGroupReads = async (): Promise<number> => {
        let n = 0
        for (const m of masters)
          n += String(await cluster.admin(m).client('LIST'))
            .split('\n')
            .filter((l) => / cmd=xreadgroup /.test(l) && / name=twainmq:shared/.test(l)).length
        return n
      }
      await until(async () => (await blockedGroupReads()) === 3, 10_000, 'one blocked group read per master')
      const producer = twain.producer<string>('jobs')
      await Promise.all(Array.from({ length: 24 }, (_, p) => producer.send(p, `j${p}`, { partition: p })))
      const seen = new Set<number>()
      let r = await first
      for (;;) {
        seen.add(r.value.partition)
        r.value.ack()
        if (seen.size === 24) break
        r = await it.next()
      }
      expect(seen.size).toBe(24)
      await c.close()
    } finally {
      await twain.close()
    }
  })
})
