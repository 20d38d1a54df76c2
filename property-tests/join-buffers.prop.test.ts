// The records a stream–stream join keeps (src/consumer/partitioned/joins/join-buffers.ts) against
// a model, with fast-check: two sides' events of a few keys, with disorder (some beyond the
// lateness), are interleaved at random (each side in its own order, as the join topic keeps them)
// and processed as `joinStreams()` processes them, over a state held as JSON like a restored
// changelog, with the lane rebuilt from the state at random points (a restore, a rewind).
// Checked: the pairs are exactly the model's (same key, event times at most `withinMs` apart,
// neither below its own side's watermark), each once, whatever the interleaving; the late
// records are the model's; and nothing is kept that the join's watermark passed by more than
// `withinMs` (the state stays small).
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { JsonState } from '../test/helpers/json-state.js'
import { JoinBuffers, type KeptRecords, type Side } from '../src/consumer/partitioned/joins/join-buffers.js'

interface Event {
  side: Side
  id: string
  key: string
  t: number
}

/** The late events of one side, in its order: below the largest event time before them, less the lateness. */
function lateOf(events: readonly Event[], lateness: number): Set<string> {
  const late = new Set<string>()
  let max = -Infinity
  for (const e of events) {
    if (e.t < max - lateness) late.add(e.id)
    max = Math.max(max, e.t)
  }
  return late
}

/** Times on a 10 ms grid (and `withinMs`, `latenessMs` too), so records fall exactly on the bounds often. */
const grid = (max: number) => fc.integer({ min: 0, max }).map((n) => n * 10)

const sideEvents = (side: Side) =>
  fc
    .array(
      fc.record({
        key: fc.constantFrom('a', 'b'),
        dt: fc.oneof(grid(3), grid(40)), // how far time moves on
        back: fc.oneof(
          { arbitrary: fc.constant(0), weight: 4 },
          { arbitrary: grid(10), weight: 4 },
          { arbitrary: grid(300), weight: 1 },
        ), // disorder, some beyond any lateness
      }),
      { minLength: 5, maxLength: 60 },
    )
    .map((xs) => {
      let now = 10_000
      return xs.map((x, i): Event => {
        now += x.dt
        return { side, id: `${side === 0 ? 'L' : 'R'}${i}`, key: x.key, t: now - x.back }
      })
    })

describe('stream–stream join buffers (property)', () => {
  it('pair exactly the model’s records, once, whatever the interleaving and restores; keep nothing the watermark passed', () => {
    fc.assert(
      fc.property(
        sideEvents(0),
        sideEvents(1),
        fc.oneof(grid(6), grid(100)), // withinMs
        fc.oneof(grid(6), grid(50)), // latenessMs
        fc.array(fc.boolean(), { maxLength: 120 }), // interleaving: true takes the left side's next
        fc.array(fc.nat({ max: 120 }), { maxLength: 6 }), // rebuild points
        (left, right, within, lateness, picks, rebuilds) => {
          const order: Event[] = []
          let i = 0
          let j = 0
          for (let k = 0; i < left.length || j < right.length; k++) {
            const takeLeft = j >= right.length || (i < left.length && (picks[k] ?? k % 2 === 0))
            order.push(takeLeft ? (left[i++] as Event) : (right[j++] as Event))
          }
          const buffers = new JoinBuffers(within, lateness)
          const st = new JsonState()
          let lane = buffers.lane(st, 0)
          const rebuildAt = new Set(rebuilds)
          const pairs: string[] = []
          const late = new Set<string>()
          for (const [n, e] of order.entries()) {
            if (rebuildAt.has(n)) lane = buffers.lane(st, n)
            if (buffers.late(lane, e.side, e.t)) {
              late.add(e.id)
              continue
            }
            for (const p of buffers.add(st, lane, e.side, e.key, e.t, e.id))
              pairs.push(`${String(p.left[1])}+${String(p.right[1])}`)
          }
          const wantLate = new Set([...lateOf(left, lateness), ...lateOf(right, lateness)])
          const want: string[] = []
          for (const l of left)
            for (const r of right)
              if (l.key === r.key && Math.abs(l.t - r.t) <= within && !wantLate.has(l.id) && !wantLate.has(r.id))
                want.push(`${l.id}+${r.id}`)
          expect([...late].sort()).toEqual([...wantLate].sort())
          expect(pairs.sort()).toEqual(want.sort())
          // Every kept record could still pair: its event time + withinMs is at or past the join's watermark.
          const maxOf = (side: readonly Event[]) =>
            side.filter((e) => !wantLate.has(e.id)).reduce((m, e) => Math.max(m, e.t), -Infinity)
          const w = Math.min(maxOf(left), maxOf(right)) - lateness
          for (const [k, v] of st.entries<KeptRecords>())
            if (k.startsWith('j:')) for (const x of [...v.l, ...v.r]) expect(x[0] + within).toBeGreaterThanOrEqual(w)
        },
      ),
      { numRuns: 1000 },
    )
  })
})
