// A topic created with `replicaAcks: 1` on a Redis Cluster, then a failover of the master holding
// its partition 0: a `createTopic` that resolved must survive it, as an acknowledged send does.
// The replicas are frozen while the topic is created, their masters' replication streams filled
// past what socket buffers hold, so nothing of it reaches them unless the creation waits for them. Before, the creation resolved once the masters had it; with the master killed
// before its replica caught up, the promoted replica had no partition and every send to it failed
// with TopicNotFoundError (a sporadic failure of the failover tests under load).
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { open } from '../../src/index.js'
import { keySlot } from '../../src/backends/redis/key-slot.js'
import { RedisCluster } from '../helpers/redis-cluster.js'
import type { RedisServer } from '../helpers/redis-server.js'
import { streamKeyOf } from '../helpers/redis-keys.js'
import { until } from '../helpers/wait.js'

const PARTITIONS = 6

let cluster: RedisCluster
beforeAll(async () => {
  cluster = await RedisCluster.start({ nodeTimeoutMs: 1000 })
}, 60_000)
afterAll(async () => {
  await cluster?.destroy()
})

/** Fill a master's replication stream past what the socket buffers of a frozen replica take in. */
async function clog(master: RedisServer, prefix: string): Promise<void> {
  const slots = (await cluster.topology()).find((n) => n.port === master.port)?.slots ?? []
  for (let n = 0; ; n++) {
    const key = `${prefix}fill{${n}}`
    const slot = keySlot(key)
    if (!slots.some(([a, b]) => slot >= a && slot <= b)) continue
    await cluster.admin(master).set(key, Buffer.alloc(32 << 20, 'x'))
    return
  }
}

describe('a topic created with replicaAcks: 1, then the master of its partition 0 fails over', () => {
  it('a creation the replicas could not confirm rejects as retriable; the one that resolves survives the failover', async () => {
    const prefix = `c${randomBytes(4).toString('hex')}:`
    const twain = await open(cluster.url, { prefix, replicaAcks: 1, replicaAckTimeoutMs: 1000 })
    const masters = await cluster.masters()
    const replicas = (await Promise.all(masters.map((m) => cluster.replicasOf(m)))).flat()
    let killed: RedisServer | undefined
    /** Kill the master of partition 0; its slot, noted while the topic can still be looked up. */
    const killMaster = async (): Promise<number> => {
      const slot = keySlot(await streamKeyOf(twain, 't', 0))
      killed = await cluster.masterOf(slot)
      await killed.kill()
      return slot
    }
    try {
      for (const r of replicas) r.pause(true)
      for (const m of masters) await clog(m, prefix)
      const first = await twain.createTopic('t', { partitions: PARTITIONS }).then(
        () => undefined,
        (e: unknown) => e,
      )
      // Resolved with no replica able to hold it: the failover that follows must not lose it.
      let slot = first === undefined ? await killMaster() : -1
      for (const r of replicas) r.pause(false)
      if (first !== undefined) {
        expect(first, String(first)).toMatchObject({ retriable: true })
        await cluster.waitHealthy()
        // Retried at once: the claim of the creation that failed does not stand in its way.
        await twain.createTopic('t', { partitions: PARTITIONS })
        slot = await killMaster()
      }
      const dead = killed as RedisServer
      await until(
        async () => {
          const m = await cluster.servingMaster(slot, [dead])
          return m !== undefined && m !== dead && (await cluster.saysMaster(m))
        },
        30_000,
        "the promotion of partition 0's replica",
      )
      // The old master comes back as the promoted one's replica, so sends can be acknowledged.
      await dead.restart()
      await cluster.waitHealthy()
      expect((await twain.describeTopic('t')).partitions).toBe(PARTITIONS)
      expect(await twain.listTopics()).toContain('t')
      const producer = twain.producer<string>('t')
      for (let p = 0; p < PARTITIONS; p++) {
        const r = await producer.send(p, `v${p}`, { partition: p })
        expect(r.offset).toBe(0)
      }
    } finally {
      for (const r of replicas) r.pause(false)
      if (killed && !killed.running) await killed.restart()
      await twain.close()
    }
  }, 120_000)
})
