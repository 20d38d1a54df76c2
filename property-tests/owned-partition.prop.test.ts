// The commit point of a partition a group member owns (OwnedPartition), against a model: offsets
// are fetched in order, acked in any order (some twice, some never), handed back on revocation,
// and reset by seeks. The commit point never passes a fetched offset that is not acked, never
// exceeds the fetch position, and reaches the fetch position once everything fetched is acked; the
// outstanding count is exactly what is fetched, not acked and not handed back, and an ack of an
// offset handed back does not count.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { OwnedPartition } from '../src/consumer/partitioned/owned-partition.js'

type Op =
  | { kind: 'fetch'; n: number }
  | { kind: 'ack'; pick: number }
  | { kind: 'ackForgotten'; pick: number }
  | { kind: 'forget'; count: number }
  | { kind: 'reset'; to: number }

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('fetch' as const), n: fc.integer({ min: 1, max: 5 }) }) },
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('ack' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('ackForgotten' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('forget' as const), count: fc.integer({ min: 1, max: 3 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('reset' as const), to: fc.integer({ min: 0, max: 60 }) }) },
)

describe('OwnedPartition commit point (model)', () => {
  it('never commits an offset that is fetched and not acked, and catches up when all are acked', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 20 }), fc.array(opArb, { maxLength: 80 }), (start, ops) => {
        const p = new OwnedPartition('t', 0, 1, start)
        let position = start
        /** Fetched, not acked, not handed back: the model's outstanding set. */
        const open = new Set<number>()
        /** Fetched in the current generation (what an ack may name). */
        let fetched: number[] = []
        const acked = new Set<number>()
        /** Handed back by `forget` in the current generation: an ack of one (a message nacked, then revoked) is not outstanding. */
        let forgotten: number[] = []
        /** After `forget` (revocation, close) the consumer only drains the partition: no more fetches until a seek. */
        let revoking = false
        for (const op of ops) {
          if (op.kind === 'fetch' && !revoking) {
            for (let i = 0; i < op.n; i++) {
              p.track(position)
              open.add(position)
              fetched.push(position)
              position++
            }
          } else if (op.kind === 'ack' && fetched.length > 0) {
            const o = fetched[op.pick % fetched.length] as number
            const first = !acked.has(o) && open.has(o)
            expect(p.ack(o), `ack of ${o} (first time: ${first})`).toBe(first)
            if (first) {
              acked.add(o)
              open.delete(o)
            }
          } else if (op.kind === 'ackForgotten' && forgotten.length > 0) {
            const o = forgotten[op.pick % forgotten.length] as number
            expect(p.ack(o), `ack of forgotten ${o}`).toBe(false)
          } else if (op.kind === 'forget' && open.size > 0) {
            // Revocation hands back the highest undelivered ones (fetched, never handed out).
            const back = [...open].sort((a, b) => a - b).slice(-Math.min(op.count, open.size))
            p.forget(back)
            revoking = true
            for (const o of back) open.delete(o)
            fetched = fetched.filter((o) => !back.includes(o))
            forgotten.push(...back)
            position = Math.min(position, ...back)
          } else if (op.kind === 'reset') {
            p.reset(op.to)
            revoking = false
            position = op.to
            open.clear()
            acked.clear()
            fetched = []
            forgotten = []
          }
          const lowestOpen = open.size === 0 ? Infinity : Math.min(...open)
          const point = p.commitPoint()
          expect(point).toBeLessThanOrEqual(lowestOpen)
          expect(point).toBeLessThanOrEqual(position)
          expect(p.position).toBe(position)
          expect(p.outstandingCount, 'fetched, not acked, not forgotten').toBe(open.size)
          if (open.size === 0) {
            expect(point).toBe(position)
            expect(p.outstandingCount).toBe(0)
          } else expect(point).toBe(Math.min(lowestOpen, position))
        }
      }),
      { numRuns: 300 },
    )
  })
})
