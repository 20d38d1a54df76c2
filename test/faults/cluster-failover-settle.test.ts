// Failover settle time with `replicaAcks: 1` (issue 24): a master killed (kill -9) or frozen past
// the node timeout (SIGSTOP) under a steady load, and NOT brought back while it is measured. Its
// replica is promoted and has no replica of its own, so no send to its partitions can be
// acknowledged: each must settle anyway — rejected as retriable once `replicaAckTimeoutMs` has
// passed — within that time of the promotion (or of its own start, for a send issued after it),
// and no acknowledged send is lost. Before, such sends stayed pending until the old master rejoined.
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
import { sleep, until } from '../helpers/wait.js'

const PARTITIONS = 6
/** Four senders per partition, so several sends to a failed partition are pending at once. */
const LANES = 24
/** The product bound (README, `replicaAckTimeoutMs`' default): every send settles within it of the promotion. */
const ACK_TIMEOUT_MS = 2000
/** Scheduling on a shared 2-core machine: the promotion is polled every 10 ms, replies go through one event loop. */
const SLACK_MS = 300
/** How long the load goes on after the promotion with the old master still away (time is the subject here). */
const MEASURE_MS = 8000

let cluster: RedisCluster
beforeAll(async () => {
  // The node timeout of the measurement (promotion ~3–4 s after the fault); another one
  // for a measurement only (README, "What a failover costs").
  cluster = await RedisCluster.start({ nodeTimeoutMs: Number(process.env.TWAINMQ_NODE_TIMEOUT_MS ?? 2000) })
}, 60_000)
afterAll(async () => {
  await cluster?.destroy()
})

describe.each(['kill -9', 'freeze'] as const)('a master %s, not back while measured, replicaAcks: 1', (fault) => {
  it(`every send to its partitions settles within ${ACK_TIMEOUT_MS} ms of the promotion (or of its start); none acknowledged is lost`, async () => {
    const prefix = `s${randomBytes(4).toString('hex')}:`
    const twain = await open(cluster.url, { prefix, replicaAcks: 1, replicaAckTimeoutMs: ACK_TIMEOUT_MS })
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
      try {
        await l.more(2000, '2000 sends before the fault')
        const faultAt = performance.now()
        if (fault === 'kill -9') await master.kill()
        else master.pause(true) // frozen past the node timeout, thawed only after the measurement
        await until(() => cluster.saysMaster(replica), 30_000, 'the replica to take over (ROLE)')
        const promotedAt = performance.now()
        await sleep(MEASURE_MS)
        const endAt = performance.now()
        const openAtEnd = l.open().filter((x) => onMaster.has(x.partition))
        // Every send to the failed partitions that was pending at the promotion or began after it.
        const sends = [
          ...l.settled.filter((x) => onMaster.has(x.partition) && x.end > promotedAt && x.end <= endAt),
          ...openAtEnd.map((x) => ({ ...x, end: Number.POSITIVE_INFINITY })),
        ]
        const due = (x: { start: number }): number => Math.max(x.start, promotedAt) + ACK_TIMEOUT_MS + SLACK_MS
        const late = sends.filter((x) => x.end > due(x) && (x.end !== Number.POSITIVE_INFINITY || endAt > due(x)))
        const pendingAtPromotion = sends.filter((x) => x.start < promotedAt)
        const longest = Math.max(0, ...pendingAtPromotion.map((x) => Math.min(x.end, endAt) - promotedAt))
        const overshoot = Math.max(0, ...sends.map((x) => Math.min(x.end, endAt) - Math.max(x.start, promotedAt)))
        // Sends to the healthy masters' partitions begun between the fault and the promotion, however
        // long they took: a failing master puts the whole cluster down (CLUSTERDOWN) until its
        // replica takes over, unless cluster-require-full-coverage is off.
        const healthy = l.settled
          .filter((x) => !onMaster.has(x.partition) && x.start >= faultAt && x.start <= promotedAt)
          .map((x) => x.end - x.start)
        const summary = `${fault} (node timeout ${cluster.nodeTimeoutMs} ms): healthy-master sends begun between the fault and the promotion p99 ${Math.round(percentile(healthy, 99))} ms, max ${Math.round(Math.max(0, ...healthy))} ms (${healthy.length}); promotion seen ${Math.round(promotedAt - faultAt)} ms after the fault; ${sends.length} sends to the failed partitions measured, ${pendingAtPromotion.length} pending at the promotion, the last of those settled ${Math.round(longest)} ms after it; longest settle after max(start, promotion) ${Math.round(overshoot)} ms; ${openAtEnd.length} still pending ${Math.round(endAt - promotedAt)} ms after the promotion; ${late.length} late`
        if (process.env.TWAINMQ_REPORT) console.error(summary)

        await l.stop(ACK_TIMEOUT_MS + 5000)
        // Acknowledged sends are all on the promoted master, the old one still away.
        const report = check(l.acked, await readBack(twain, 't'))
        expect(report.counts, report.text).toEqual(CLEAN)
        await expectRetriable(l.failures, cluster, `${await streamKeyOf(twain, 't', 0)}:end`, summary)
        expect(sends.length).toBeGreaterThan(0)
        expect(late.length, summary).toBe(0)
      } finally {
        // Bring the old master back so the load (if it is still going) can settle and the next case finds a healthy cluster.
        if (fault === 'kill -9') await master.restart()
        else master.pause(false)
        await l.stop().catch(() => undefined)
        await cluster.waitHealthy()
      }
    } finally {
      await twain.close()
    }
  }, 180_000)
})
