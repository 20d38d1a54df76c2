// Failover of a Redis Cluster master under load (issue 12): with `replicaAcks: 1` no acknowledged
// send is lost, duplicated or has its offset reused, whether the master is killed (kill -9, then
// restarted: it rejoins as a replica) or frozen past the node timeout and thawed while sends go on
// (a thawed master takes writes for a moment before it learns it was replaced: without replicaAcks
// those are acknowledged and then dropped when it resyncs from the new master).
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { open } from '../../src/index.js'
import { keySlot } from '../../src/backends/redis/key-slot.js'
import { check, CLEAN, readBack } from '../helpers/checker.js'
import { expectRetriable } from '../helpers/cluster-report.js'
import { percentile, sendLoad } from '../helpers/cluster-load.js'
import { RedisCluster } from '../helpers/redis-cluster.js'
import { createReplicated } from '../helpers/cluster-topic.js'
import { streamKeyOf } from '../helpers/redis-keys.js'
import { until } from '../helpers/wait.js'

const PARTITIONS = 6
const LANES = 12

let cluster: RedisCluster
beforeAll(async () => {
  cluster = await RedisCluster.start({ nodeTimeoutMs: 1000 })
}, 60_000)
afterAll(async () => {
  await cluster?.destroy()
})

const cases = [
  ['kill -9', 1],
  ['freeze', 1],
  ['kill -9 while its replica lags', 1],
  ['kill -9', 0],
  ['freeze', 0],
] as const

describe.each(cases)('a master %s under load, replicaAcks: %d', (fault, replicaAcks) => {
  // With replicaAcks 1: nothing acknowledged is lost. With 0 (a failover can lose the last
  // acknowledged sends): liveness, sends settle soon after the promotion.
  it(
    replicaAcks
      ? 'no acknowledged send is lost, duplicated or reused'
      : 'sends settle within 2 s of the promotion; sends to healthy masters are not held up',
    async () => {
      const prefix = `f${randomBytes(4).toString('hex')}:`
      const twain = await open(cluster.url, { prefix, replicaAcks, replicaAckTimeoutMs: 3000 })
      // With replicaAcks 1 no acknowledged offset is handed out again, so the producer reports no
      // rollback (decision 113); with 0 a failover may lose acknowledged sends, and reporting is right.
      const rollbacks: Error[] = []
      const onWarning = (w: Error) => void ((w as { code?: string }).code === 'ERR_LOG_ROLLBACK' && rollbacks.push(w))
      process.on('warning', onWarning)
      try {
        await createReplicated(cluster, prefix, 't', { partitions: PARTITIONS })
        const slot = keySlot(await streamKeyOf(twain, 't', 0))
        const master = await cluster.masterOf(slot)
        const [replica] = await cluster.replicasOf(master)
        if (!replica) throw new Error('no replica')
        const onMaster = new Set<number>()
        for (let p = 0; p < PARTITIONS; p++)
          if ((await cluster.masterOf(keySlot(await streamKeyOf(twain, 't', p)))) === master) onMaster.add(p)
        const l = sendLoad(
          twain,
          't',
          Array.from({ length: LANES }, (_, lane) => lane % PARTITIONS),
        )
        await l.more(2000, '2000 sends before the fault')
        if (fault === 'kill -9 while its replica lags') {
          // The replica stops taking the replication stream while sends go on; the master then dies.
          // Without replicaAcks the sends of that while were acknowledged and are not on the replica.
          // Large values, so the stream outgrows the socket buffers a stopped process still fills.
          replica.pause(true)
          l.padding = 'p'.repeat(32 * 1024)
          await l.more(2000, '2000 sends settled while the replica lags', 'settled')
          await master.kill()
          l.padding = ''
          replica.pause(false)
        } else if (fault === 'kill -9') await master.kill()
        else master.pause(true)
        const faultAt = performance.now()
        await until(
          async () => (await cluster.servingMaster(slot, [master])) === replica,
          30_000,
          'promotion of the replica',
        )
        const promotedAt = performance.now()
        await l.more(2000, '2000 sends after the promotion')
        if (fault !== 'freeze') await master.restart()
        else master.pause(false) // thawed while the sends go on
        await cluster.waitHealthy()
        await l.more(2000, '2000 sends after the old master rejoined')
        await l.stop()
        const report = check(l.acked, await readBack(twain, 't'))
        if (replicaAcks) expect(report.counts, report.text).toEqual(CLEAN)
        // Sends that failed did so with typed, retriable errors (none was acknowledged and then lost).
        await expectRetriable(l.failures, cluster, `${await streamKeyOf(twain, 't', 0)}:end`, fault)
        // Liveness: a send to the failed-over partition settles soon after the promotion was seen
        // (goal: 2 s; the bound leaves room for a loaded machine), and sends to partitions on healthy
        // masters are not held up while the failed one is down. (With replicaAcks 1 a promoted master
        // has no replica until the old one rejoins: its sends wait replicaAckTimeoutMs and fail.)
        const onFailed = l.settled.filter((x) => onMaster.has(x.partition) && x.end > faultAt && x.start < promotedAt)
        const longest = Math.max(0, ...onFailed.map((x) => x.end - promotedAt))
        const healthy = l.settled
          .filter((x) => !onMaster.has(x.partition) && x.start >= faultAt && x.end <= promotedAt)
          .map((x) => x.end - x.start)
        if (process.env.TWAINMQ_REPORT)
          console.error(
            `${fault}: promotion seen ${Math.round(promotedAt - faultAt)} ms after the fault; longest send after it ${Math.round(longest)} ms; healthy-master sends meanwhile p99 ${percentile(healthy, 99).toFixed(1)} ms (${healthy.length})`,
          )
        if (process.env.TWAINMQ_REPORT) {
          const worst = [...onFailed]
            .sort((a, b) => b.end - a.end)
            .slice(0, 3)
            .map((x) => `p${x.partition} ${Math.round(x.start - faultAt)}..${Math.round(x.end - faultAt)}`)
          const kinds = new Map<string, number>()
          for (const e of l.failures) kinds.set(String(e).slice(0, 90), (kinds.get(String(e).slice(0, 90)) ?? 0) + 1)
          console.error(`  worst (ms after fault): ${worst.join(', ')}; failures: ${JSON.stringify([...kinds])}`)
        }
        if (!replicaAcks) {
          expect(longest).toBeLessThan(3000)
          // The goal (p99 < 100 ms) is the bench's; this tells healthy-master sends held up behind the failed one (seconds) from load.
          expect(percentile(healthy, 99)).toBeLessThan(1000)
        }
        if (replicaAcks) expect(rollbacks.map((w) => w.message)).toEqual([])
      } finally {
        process.off('warning', onWarning)
        await twain.close()
      }
    },
    240_000,
  )
})
