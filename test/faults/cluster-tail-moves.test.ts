// A tail on a Redis Cluster goes on when its partitions' slot moves (issue 12): its shared blocking
// read (one per slot group, on a connection to the slot's master) is re-issued on the master that
// serves the slot now, after a slot migration and after a manual failover, with no record skipped
// and no stall, and after a kill -9 of that master. Bounds, not timings: every acknowledged send
// arrives within 15 s of the move.
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { keySlot } from '../../src/backends/redis/key-slot.js'
import { ClosedError, LogRollbackError, open, type Twain } from '../../src/index.js'
import { RedisCluster } from '../helpers/redis-cluster.js'
import { createReplicated } from '../helpers/cluster-topic.js'
import { streamKeyOf } from '../helpers/redis-keys.js'
import { until } from '../helpers/wait.js'

let cluster: RedisCluster
beforeAll(async () => {
  cluster = await RedisCluster.start()
}, 60_000)
afterAll(async () => {
  await cluster?.destroy()
})

/** Sends `v<i>` (i = 0, 1, …) to partition 0 one after another until stopped; records the acknowledged ones. */
function sender(twain: Twain): { acked: string[]; sent: () => number; stop(): Promise<void> } {
  const producer = twain.producer<string>('t')
  const acked: string[] = []
  let stopped = false
  const loop = (async () => {
    for (let n = 0; !stopped; n++) {
      try {
        await producer.send(0, `v${n}`, { partition: 0 })
        acked.push(`v${n}`)
      } catch (e) {
        // A send rejected during the move (another helper's concern): not counted. A closed
        // producer (the test ended early) ends the loop; any rejection yields to timers first, so a
        // send that fails at once cannot starve the event loop (and the test's own timeouts).
        if (e instanceof ClosedError) return
        await new Promise((r) => setImmediate(r))
      }
    }
  })()
  return {
    acked,
    sent: () => acked.length,
    async stop() {
      stopped = true
      await loop
    },
  }
}

describe.each(['slot migration', 'manual failover', 'kill -9 of the master'] as const)('a tail across a %s', (move) => {
  it('receives every acknowledged send, in order, after the move', async () => {
    const prefix = `m${randomBytes(4).toString('hex')}:`
    // After a kill, only sends a replica acknowledged are sure to be in the log.
    const twain = await open(cluster.url, { prefix, replicaAcks: move === 'kill -9 of the master' ? 1 : 0 })
    // A tail may see a record before the replicas acknowledge it; a kill then rolls it back, the
    // retried send stores it again, and the tail delivers it again after reporting the rollback.
    const rollbacks: LogRollbackError[] = []
    const onWarning = (w: Error) => {
      if (w instanceof LogRollbackError && w.partition === 0) rollbacks.push(w)
    }
    process.on('warning', onWarning)
    let running: ReturnType<typeof sender> | undefined
    try {
      await createReplicated(cluster, prefix, 't', { partitions: 3 })
      const slot = keySlot(await streamKeyOf(twain, 't', 0))
      const got: string[] = []
      const offsets: number[] = []
      const it = twain.tail<string>('t', { from: 'start' })[Symbol.asyncIterator]()
      const reading = (async () => {
        for (;;) {
          const r = await it.next()
          if (r.done) return
          if (r.value.partition === 0) {
            got.push(r.value.value)
            offsets.push(r.value.offset)
          }
        }
      })()
      const s = (running = sender(twain))
      await until(() => got.length >= 200, 15_000, '200 records tailed before the move')
      const master = await cluster.masterOf(slot)
      if (move === 'slot migration') {
        const target = (await cluster.masters()).find((m) => m !== master)
        if (!target) throw new Error('no other master')
        await cluster.migrateSlot(slot, target, { batch: 10 })
      } else {
        const [replica] = await cluster.replicasOf(master)
        if (!replica) throw new Error('no replica')
        if (move === 'manual failover') await cluster.failover(replica)
        else {
          // The tail's blocking read was on the killed master; the replica takes over, and the old
          // master comes back as its replica (so sends are acknowledged again).
          await master.kill()
          await until(
            async () => (await cluster.servingMaster(slot, [master])) === replica,
            30_000,
            'promotion of the replica',
          )
          await master.restart()
          await cluster.waitHealthy()
        }
      }
      const atMove = s.sent()
      await until(() => s.sent() >= atMove + 200, 20_000, '200 sends after the move')
      await s.stop()
      const last = s.acked[s.acked.length - 1] as string
      await until(() => got.includes(last), 15_000, `the last acknowledged send (${last}) tailed`)
      // In order, every acknowledged one there (a rejected send may or may not be stored), none
      // twice but a record the tail saw before a rollback it reported (only after a kill).
      const index = got.map((v) => Number(v.slice(1)))
      expect(index).toEqual([...index].sort((a, b) => a - b))
      const again = got.flatMap((v, i) =>
        got.indexOf(v) === i
          ? []
          : [{ value: v, first: offsets[got.indexOf(v)] as number, second: offsets[i] as number }],
      )
      const explained = (d: { first: number; second: number }) =>
        rollbacks.some((r) => r.from <= d.first && d.first <= r.to && d.second >= r.from)
      expect(again.filter((d) => move !== 'kill -9 of the master' || !explained(d))).toEqual([])
      const seen = new Set(got)
      expect(s.acked.filter((v) => !seen.has(v))).toEqual([])
      // The lane to the node that lost the slot is closed (this topic has no other partition there).
      const tailConnections = async (): Promise<number> =>
        String(await cluster.admin(master).client('LIST'))
          .split('\n')
          .filter((l) => / name=twainmq:tail/.test(l)).length
      await until(async () => (await tailConnections()) === 0, 10_000, 'no tail connection left on the old master')
      await it.return?.()
      await reading
    } finally {
      process.off('warning', onWarning)
      await running?.stop()
      await twain.close()
    }
    // Its own waits are the bounds under test (15 s after the move, 20 s for 200 sends, …); the test as
    // a whole gets room for all of them on a loaded machine (the default 30 s ended it mid-wait once).
  }, 120_000)
})
