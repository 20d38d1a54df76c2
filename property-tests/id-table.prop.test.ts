// The file backend's idempotency table (src/backends/file/id-table.ts) against a model: for any
// sequence of calls (ids repeated within and across calls, windows of any length, time moving on,
// writes that fail, other processes' records read from the log), each id is judged a duplicate
// exactly when the model says its latest stored record is no older than the call's window, and a
// duplicate gets that record's offset. With generations a few ids long, ids past the last ones
// stored may be forgotten, but nothing is ever taken for a duplicate the model does not see.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { IdTable, type IdPlan } from '../src/backends/file/id-table.js'
import { outcomeResults } from '../src/backends/outcome.js'
import { ID_HEADER } from '../src/backends/record.js'
import { idLogSource, type IdLogRecord } from '../test/helpers/id-log.js'

const step = fc.oneof(
  fc.record({
    kind: fc.constant('call' as const),
    ids: fc.array(fc.option(fc.constantFrom('a', 'b', 'c', 'd', 'e'), { nil: undefined }), {
      minLength: 1,
      maxLength: 6,
    }),
    window: fc.constantFrom(1, 5, 20, 1000),
    fails: fc.boolean(),
    // Its caller hears of the failure only after the next call's decision.
    late: fc.boolean(),
  }),
  // Another process appends records (some with ids) that this table reads under the lock.
  fc.record({
    kind: fc.constant('other' as const),
    ids: fc.array(fc.option(fc.constantFrom('a', 'b', 'f'), { nil: undefined }), { minLength: 1, maxLength: 3 }),
  }),
  fc.record({ kind: fc.constant('wait' as const), ms: fc.integer({ min: 0, max: 30 }) }),
)

type Step = typeof step extends fc.Arbitrary<infer T> ? T : never

/**
 * Run `steps` against a table whose generations hold `remember` ids (undefined: the default,
 * `MAX_REMEMBERED_IDS`, more than any run stores: nothing is forgotten for the bound) and check
 * every verdict against the model.
 */
function check(steps: Step[], remember: number | undefined): void {
  const log: IdLogRecord[] = []
  const table = new IdTable(idLogSource(log), remember)
  const model = new Map<string, { offset: number; at: number }>()
  // Ids in the order of their latest record: the table must remember at least the last `remember`.
  const order: string[] = []
  const stored = (id: string, offset: number, at: number): void => {
    model.set(id, { offset, at })
    const k = order.indexOf(id)
    if (k >= 0) order.splice(k, 1)
    order.push(id)
  }
  let late: IdPlan | undefined
  let now = 1_000_000
  for (const s of steps) {
    if (s.kind === 'wait') now += s.ms
    else if (s.kind === 'other') {
      // Another process's append: whatever its ids, it is in the log (the model sees it as stored).
      for (const id of s.ids) {
        const offset = log.length
        log.push({ offset, timestamp: now, headers: id === undefined ? undefined : { [ID_HEADER]: id } })
        if (id !== undefined) stored(id, offset, now)
      }
    } else {
      // As IdAppends does: a window reaching before what the table holds reads the log from its start.
      const from = now - s.window
      if (!table.covers(from)) {
        const at = log.find((r) => r.timestamp >= from)?.offset ?? log.length
        table.start(at, from)
      }
      table.syncTo(log.length)
      const recent = new Set(remember === undefined ? order : order.slice(-remember))
      const plan = table.decide(s.ids, now, s.window)
      // A plan whose caller heard of its failure late: the decision above abandoned it first.
      if (late !== undefined) table.abandon(late)
      late = undefined
      if (s.fails) {
        if (s.late) late = plan
        else table.abandon(plan)
        continue
      }
      const base = log.length
      plan.fresh.forEach((i) => {
        const id = s.ids[i]
        log.push({ offset: log.length, timestamp: now, headers: id === undefined ? undefined : { [ID_HEADER]: id } })
      })
      const results = outcomeResults(table.stored(plan, base, now))
      const inCall = new Map<string, number>()
      for (const [i, id] of s.ids.entries()) {
        const got = results[i] as { offset: number; duplicate: boolean }
        if (id === undefined) {
          expect(got.duplicate).toBe(false)
          continue
        }
        const first = inCall.get(id)
        if (first !== undefined) {
          expect(got).toEqual({ offset: first, duplicate: true })
          continue
        }
        const m = model.get(id)
        const inWindow = m !== undefined && now - m.at <= s.window ? m.offset : undefined
        // Never a duplicate the model does not see, never another offset; forgotten only past the
        // last `remember` ids.
        if (got.duplicate) expect(got.offset).toBe(inWindow)
        else {
          if (inWindow !== undefined) expect(recent.has(id)).toBe(false)
          inCall.set(id, got.offset)
          stored(id, got.offset, now)
        }
      }
      expect(results.filter((r) => !r.duplicate).map((r) => r.offset)).toEqual(
        Array.from({ length: plan.fresh.length }, (_, k) => base + k),
      )
    }
  }
}

describe('IdTable against a model', () => {
  it('judges duplicates as the model does, whatever the calls, windows, waits, failures and other writers', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }), (steps) => check(steps, undefined)),
      { numRuns: 300 },
    )
  })

  it('with small generations: no false duplicate, and the last ids stored always remembered within their window', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 60 }), fc.integer({ min: 1, max: 4 }), (steps, remember) =>
        check(steps, remember),
      ),
      { numRuns: 300 },
    )
  })
})
