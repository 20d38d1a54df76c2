// The Redis Cluster test harness itself (test/helpers/redis-cluster.ts): a real 6-node cluster is
// formed, and each fault it offers does what the cluster tests rely on.
import { Cluster } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RedisCluster } from '../../helpers/redis-cluster.js'
import { until } from '../../helpers/wait.js'

describe('RedisCluster harness', () => {
  let cluster: RedisCluster
  let client: Cluster

  beforeAll(async () => {
    cluster = await RedisCluster.start()
    client = new Cluster(
      cluster.nodes.map((n) => ({ host: '127.0.0.1', port: n.port })),
      { redisOptions: { protocol: 2 } },
    )
  }, 60_000)
  afterAll(async () => {
    client?.disconnect()
    await cluster?.destroy()
  })

  it('forms 3 masters with one replica each, all slots served', async () => {
    const topo = await cluster.topology()
    const masters = topo.filter((n) => n.role === 'master')
    expect(masters).toHaveLength(3)
    expect(masters.reduce((sum, m) => sum + m.slots.reduce((s, [a, b]) => s + b - a + 1, 0), 0)).toBe(16384)
    for (const m of masters) expect(topo.filter((n) => n.masterId === m.id)).toHaveLength(1)
    await client.set('{h}a', '1')
    expect(await client.get('{h}a')).toBe('1')
  })

  it('moves a slot with its keys, key by key', async () => {
    const slot = await cluster.slotOf('{move}x')
    for (let i = 0; i < 20; i++) await client.set(`{move}k${i}`, String(i))
    const from = await cluster.masterOf(slot)
    const to = (await cluster.masters()).find((m) => m !== from)
    if (!to) throw new Error('no other master')
    await cluster.migrateSlot(slot, to, { batch: 3, pauseMs: 5 })
    expect(await cluster.masterOf(slot)).toBe(to)
    expect(Number(await cluster.admin(to).call('CLUSTER', 'COUNTKEYSINSLOT', String(slot)))).toBe(20)
    expect(await client.get('{move}k7')).toBe('7')
  })

  it('fails over by hand: the replica becomes master and keeps the data', async () => {
    const slot = await cluster.slotOf('{h}a')
    const master = await cluster.masterOf(slot)
    const [replica] = await cluster.replicasOf(master)
    if (!replica) throw new Error('no replica')
    await cluster.failover(replica)
    await until(async () => (await cluster.servingMaster(slot)) === replica, 10_000, 'the new master in the topology')
    await cluster.waitHealthy()
    expect(await client.get('{h}a')).toBe('1')
  })

  it('kill -9 of a master: its replica is promoted; the killed node rejoins as a replica after restart', async () => {
    const slot = await cluster.slotOf('{h}a')
    const master = await cluster.masterOf(slot)
    const [replica] = await cluster.replicasOf(master)
    if (!replica) throw new Error('no replica')
    await master.kill()
    await until(
      async () => (await cluster.servingMaster(slot, [master])) === replica,
      20_000,
      'promotion of the replica',
    )
    await master.restart()
    await cluster.waitHealthy()
    expect((await cluster.replicasOf(replica)).map((n) => n.port)).toEqual([master.port])
    expect(await client.get('{h}a')).toBe('1')
  })

  it('a frozen master is failed over after the node timeout and rejoins when thawed', async () => {
    const slot = await cluster.slotOf('{h}a')
    const master = await cluster.masterOf(slot)
    const [replica] = await cluster.replicasOf(master)
    if (!replica) throw new Error('no replica')
    master.pause(true)
    try {
      await until(
        async () => (await cluster.servingMaster(slot, [master])) === replica,
        20_000,
        'promotion of the replica',
      )
    } finally {
      master.pause(false)
    }
    await cluster.waitHealthy()
    expect(String(await cluster.admin(master).call('ROLE'))).toMatch(/^slave/)
  })
})
