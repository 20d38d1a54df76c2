// Isolation on a Redis Cluster (issue 12): while one master is down (killed, its replica not yet
// promoted: a long node timeout keeps that window open), sends to partitions on the healthy masters
// go on and settle fast, even when the dead master holds the topic's `:meta` key (the topic's
// configuration is cached, and an expired cache entry that cannot be re-read is used as it is).
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { open } from '../../src/index.js'
import { keySlot } from '../../src/backends/redis/key-slot.js'
import { percentile, sendLoad } from '../helpers/cluster-load.js'
import { RedisCluster } from '../helpers/redis-cluster.js'
import { streamKeyOf } from '../helpers/redis-keys.js'
import { until } from '../helpers/wait.js'

const PARTITIONS = 12
/** The window measured after the kill: several expiries of the 1 s configuration cache. */
const WINDOW_MS = 3500
/**
 * The goal is p99 < 100 ms (the bench's figure). The bound only has to tell that apart from sends
 * held up by the dead master (a configuration read waiting out its 1.5 s command timeout at each
 * expiry of the cache), and must not be broken by a loaded machine.
 */
const P99_BOUND_MS = 1000

let cluster: RedisCluster
beforeAll(async () => {
  cluster = await RedisCluster.start({ masters: 3, replicas: 1, nodeTimeoutMs: 10_000 })
}, 60_000)
afterAll(async () => {
  await cluster?.destroy()
})

it('the master holding the topic metadata is killed: sends to partitions on the other masters go on, p99 bounded, none fails', async () => {
  const prefix = `i${randomBytes(4).toString('hex')}:`
  const twain = await open(cluster.url, { prefix })
  try {
    await twain.createTopic('t', { partitions: PARTITIONS })
    const metaMaster = await cluster.masterOf(keySlot(`${prefix}t:meta`))
    const [replica] = await cluster.replicasOf(metaMaster)
    if (!replica) throw new Error('no replica')
    const healthy: number[] = []
    for (let p = 0; p < PARTITIONS; p++)
      if ((await cluster.masterOf(keySlot(await streamKeyOf(twain, 't', p)))) !== metaMaster) healthy.push(p)
    expect(healthy.length).toBeGreaterThan(0)
    const load = sendLoad(twain, 't', healthy)
    await load.more(1000, '1000 sends before the kill')

    await metaMaster.kill()
    const killedAt = Date.now()
    const fromAcked = load.latencies.length
    const fromFailed = load.failures.length
    await until(
      () => Date.now() - killedAt >= WINDOW_MS && load.latencies.length >= fromAcked + 500,
      30_000,
      `${WINDOW_MS} ms and 500 sends after the kill`,
    )
    await load.stop()
    // Still before the promotion: the measured window is the outage itself.
    expect(String(await cluster.admin(replica).call('ROLE'))).toMatch(/^slave/)

    expect(load.failures.slice(fromFailed).map(String)).toEqual([])
    const after = load.latencies.slice(fromAcked).map((l) => l.ms)
    expect(percentile(after, 99)).toBeLessThan(P99_BOUND_MS)
  } finally {
    await twain.close()
  }
}, 90_000)
