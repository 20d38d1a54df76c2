// Manual failover (`CLUSTER FAILOVER`) of a Redis Cluster master under load (issue 12): the replica
// takes over after catching up, so nothing acknowledged is lost, duplicated or reused, and a tail
// sees every acknowledged record exactly once, in order per partition.
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { open } from '../../src/index.js'
import { keySlot } from '../../src/backends/redis/key-slot.js'
import { check, CLEAN, readBack } from '../helpers/checker.js'
import { collect, deliveredAll, deliveryProblems, sendLoad } from '../helpers/cluster-load.js'
import { RedisCluster } from '../helpers/redis-cluster.js'
import { streamKeyOf } from '../helpers/redis-keys.js'
import { until } from '../helpers/wait.js'

const PARTITIONS = 4

let cluster: RedisCluster
beforeAll(async () => {
  cluster = await RedisCluster.start({ masters: 3, replicas: 1 })
}, 60_000)
afterAll(async () => {
  await cluster?.destroy()
})

it('CLUSTER FAILOVER under load: no loss, no duplicate, no reuse; the tail delivers every acknowledged send once, in order', async () => {
  const prefix = `mf${randomBytes(4).toString('hex')}:`
  const twain = await open(cluster.url, { prefix })
  try {
    await twain.createTopic('t', { partitions: PARTITIONS })
    const tail = collect(twain.tail<string>('t', { from: 'start' }))
    const load = sendLoad(twain, 't', [0, 0, 1, 1, 2, 3])
    await load.more(1500, '1500 sends before the failover')
    const slot = keySlot(await streamKeyOf(twain, 't', 0))
    const master = await cluster.masterOf(slot)
    const [replica] = await cluster.replicasOf(master)
    if (!replica) throw new Error('no replica')
    await cluster.failover(replica)
    await until(async () => (await cluster.servingMaster(slot)) === replica, 20_000, 'the replica serving the slot')
    const promoted = load.acked.filter((a) => a.partition === 0).length
    await until(
      () => load.acked.filter((a) => a.partition === 0).length >= promoted + 1000,
      30_000,
      '1000 sends to partition 0 after the failover',
    )
    await load.stop()

    const report = check(load.acked, await readBack(twain, 't'))
    expect(report.counts, report.text).toEqual(CLEAN)
    for (const e of load.failures) expect(e, String(e)).toMatchObject({ retriable: true })
    await until(() => deliveredAll(tail, load.acked), 20_000, 'the tail to deliver every acknowledged send')
    expect(deliveryProblems(tail, load.acked, new Map(Array.from({ length: PARTITIONS }, (_, p) => [p, 0])))).toEqual(
      [],
    )
    expect(tail.error).toBeUndefined()
  } finally {
    await twain.close()
  }
}, 120_000)
