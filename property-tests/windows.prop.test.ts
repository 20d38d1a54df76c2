// Event-time windows (src/consumer/partitioned/windows) against models, with fast-check: a random
// log of a few keys' events with disorder (some beyond the lateness) is processed as `windowed()`
// processes it (place, move the watermark, close up to a limit of windows per message), over a
// state held as JSON like a restored changelog. Checked: the results equal a model computed from
// the events alone (tumbling, hopping and session windows); they come out in the order the
// watermark reached them; and rebuilding the index from the state at random points (a restore, a
// rewind) changes nothing (the index and the watermark come back from the state alone), so a
// message processed again closes the same windows in the same order.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { JsonState } from '../test/helpers/json-state.js'
import { FixedWindows } from '../src/consumer/partitioned/windows/fixed-windows.js'
import { SessionWindows } from '../src/consumer/partitioned/windows/session-windows.js'
import { WindowIndex } from '../src/consumer/partitioned/windows/window-index.js'
import {
  hopping,
  session,
  tumbling,
  windowStarts,
  type WindowSpec,
} from '../src/consumer/partitioned/windows/window-spec.js'
import type { Windowing } from '../src/consumer/partitioned/windows/windowing.js'

interface Event {
  id: number
  key: string
  t: number
}
interface Result {
  key: string
  start: number
  end: number
  ids: number[]
}

/** Process `events` as windowed() does; `rebuildAt`: indexes of events before which the index is rebuilt from the state. */
function run(
  spec: WindowSpec,
  events: readonly Event[],
  lateness: number,
  limit: number,
  rebuildAt: ReadonlySet<number>,
) {
  const w: Windowing<number[]> =
    spec.kind === 'session'
      ? new SessionWindows<number[]>(spec, (a, b) => [...a, ...b])
      : new FixedWindows<number[]>(spec)
  const st = new JsonState()
  let index = new WindowIndex()
  let wm = -Infinity
  const out: Result[] = []
  const late: number[] = []
  for (const [i, e] of events.entries()) {
    if (rebuildAt.has(i)) {
      // As windowed() after a restore: the index and the watermark from the state alone.
      index = new WindowIndex()
      wm = st.get<number>('wm') ?? -Infinity
      for (const [k, v] of st.entries()) wm = Math.max(wm, w.reindex(index, k as string, v) ?? -Infinity)
    }
    const after = Math.max(wm, e.t - lateness)
    if (!w.place({ st, index, key: e.key, t: e.t, wm, mark: after, add: (a) => [...(a ?? []), e.id] })) late.push(e.id)
    wm = after
    const closed = w.close(st, index, wm, limit)
    if (closed.length > 0) st.set('wm', wm)
    for (const c of closed) out.push({ key: c.key as string, start: c.start, end: c.end, ids: c.value })
  }
  return { out, late }
}

/** The watermark each event meets: the largest event time before it, less the lateness. */
function watermarks(events: readonly Event[], lateness: number): number[] {
  let wm = -Infinity
  return events.map((e) => {
    const at = wm
    wm = Math.max(wm, e.t - lateness)
    return at
  })
}

/** Tumbling and hopping: a window holds the events of its key in it that met a watermark below its end. */
function fixedModel(spec: WindowSpec & { kind: 'tumbling' | 'hopping' }, events: readonly Event[], lateness: number) {
  const wms = watermarks(events, lateness)
  const windows = new Map<string, Result>()
  for (const [i, e] of events.entries())
    for (const start of windowStarts(spec, e.t)) {
      if (start + spec.sizeMs <= (wms[i] as number)) continue
      const k = `${start}:${e.key}`
      const r = windows.get(k) ?? { key: e.key, start, end: start + spec.sizeMs, ids: [] }
      r.ids.push(e.id)
      windows.set(k, r)
    }
  return [...windows.values()]
}

/** Sessions: the in-time events (at or past the watermark they met) of each key, grouped where consecutive times are less than the gap apart. */
function sessionModel(gap: number, events: readonly Event[], lateness: number) {
  const wms = watermarks(events, lateness)
  const byKey = new Map<string, Event[]>()
  for (const [i, e] of events.entries())
    if (e.t >= (wms[i] as number)) byKey.set(e.key, [...(byKey.get(e.key) ?? []), e])
  const out: Result[] = []
  for (const [key, es] of byKey) {
    const sorted = [...es].sort((a, b) => a.t - b.t || a.id - b.id)
    let cur: Result | undefined
    let last = -Infinity
    for (const e of sorted) {
      if (cur === undefined || e.t - last >= gap) out.push((cur = { key, start: e.t, end: e.t + 1, ids: [] }))
      cur.ids.push(e.id)
      cur.end = e.t + 1
      last = e.t
    }
  }
  return out
}

const canon = (rs: readonly Result[]) =>
  rs.map((r) => `${r.key} ${r.start} ${r.end} ${[...r.ids].sort((a, b) => a - b).join(',')}`).sort()

/** Events of keys a–c in time steps with disorder, then far events of key z, enough to close every window at two a message. */
const eventsArb = fc
  .array(
    fc.record({
      key: fc.constantFrom('a', 'b', 'c'),
      step: fc.integer({ min: 0, max: 40 }),
      back: fc.integer({ min: 0, max: 60 }),
    }),
    {
      maxLength: 120,
    },
  )
  .map((xs) => {
    let clock = 1000
    const events: Event[] = xs.map((x, id) => {
      clock += x.step
      return { id, key: x.key, t: Math.max(0, clock - x.back) }
    })
    for (let n = 0; n < 1000; n++) events.push({ id: events.length, key: 'z', t: clock + 100_000 + n })
    return events
  })

const specArb: fc.Arbitrary<WindowSpec> = fc.oneof(
  fc.integer({ min: 5, max: 80 }).map((s) => tumbling(s)),
  fc.tuple(fc.integer({ min: 2, max: 20 }), fc.integer({ min: 1, max: 6 })).map(([a, n]) => hopping(a * n, a)),
  fc.integer({ min: 5, max: 80 }).map((g) => session(g)),
)

describe('windows against a model', () => {
  it('results equal the model, in the order the watermark reached them, the same after an index rebuilt from the state', () => {
    fc.assert(
      fc.property(
        specArb,
        eventsArb,
        fc.integer({ min: 0, max: 50 }),
        fc.integer({ min: 2, max: 6 }),
        fc.uniqueArray(fc.integer({ min: 0, max: 400 }), { maxLength: 10 }),
        (spec, events, lateness, limit, rebuild) => {
          const plain = run(spec, events, lateness, limit, new Set())
          const model =
            spec.kind === 'session' ? sessionModel(spec.gapMs, events, lateness) : fixedModel(spec, events, lateness)
          const zOnly = (rs: readonly Result[]) => rs.filter((r) => r.key !== 'z')
          expect(canon(zOnly(plain.out))).toEqual(canon(zOnly(model)))
          // The order the watermark reached them: by closing time, then key.
          const closing = (r: Result) => (spec.kind === 'session' ? r.end - 1 + spec.gapMs : r.end)
          for (let i = 1; i < plain.out.length; i++) {
            const [p, q] = [plain.out[i - 1] as Result, plain.out[i] as Result]
            expect(closing(p) < closing(q) || (closing(p) === closing(q) && p.key <= q.key)).toBe(true)
          }
          expect(run(spec, events, lateness, limit, new Set(rebuild))).toEqual(plain)
        },
      ),
      { numRuns: 200 },
    )
  })
})
