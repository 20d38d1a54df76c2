// The file backend's idempotency table (src/backends/file/id-table.ts) against a model: for any
// sequence of calls (ids repeated within and across calls, windows of any length, time moving on,
// writes that fail, other processes' records read from the log), each id is judged a duplicate
// exactly when the model says its latest stored record is no older than the call's window, and a
// duplicate gets that record's offset.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { IdTable, type IdSource } from '../src/backends/file/id-table.js'
import { ID_HEADER } from '../src/backends/record.js'

interface LogRecord {
  offset: number
  timestamp: number
  headers: Record<string, string> | undefined
}

/** The partition's log, read through the table's source as the file reader would give it. */
function logSource(log: LogRecord[]): IdSource {
  let at = 0
  return {
    next: (max) => {
      const i = log.findIndex((r) => r.offset >= at)
      const got = i < 0 ? [] : log.slice(i, i + max)
      if (got.length > 0) at = (got[got.length - 1] as LogRecord).offset + 1
      return got
    },
    seek: (offset) => void (at = offset),
    close: () => undefined,
  }
}

const step = fc.oneof(
  fc.record({
    kind: fc.constant('call' as const),
    ids: fc.array(fc.option(fc.constantFrom('a', 'b', 'c', 'd', 'e'), { nil: undefined }), {
      minLength: 1,
      maxLength: 6,
    }),
    window: fc.constantFrom(1, 5, 20, 1000),
    fails: fc.boolean(),
  }),
  // Another process appends records (some with ids) that this table reads under the lock.
  fc.record({
    kind: fc.constant('other' as const),
    ids: fc.array(fc.option(fc.constantFrom('a', 'b', 'f'), { nil: undefined }), { minLength: 1, maxLength: 3 }),
  }),
  fc.record({ kind: fc.constant('wait' as const), ms: fc.integer({ min: 0, max: 30 }) }),
)

describe('IdTable against a model', () => {
  it('judges duplicates as the model does, whatever the calls, windows, waits, failures and other writers', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }), (steps) => {
        const log: LogRecord[] = []
        const table = new IdTable(logSource(log))
        const model = new Map<string, { offset: number; at: number }>()
        let now = 1_000_000
        for (const s of steps) {
          if (s.kind === 'wait') now += s.ms
          else if (s.kind === 'other') {
            // Another process's append: whatever its ids, it is in the log (the model sees it as stored).
            for (const id of s.ids) {
              const offset = log.length
              log.push({ offset, timestamp: now, headers: id === undefined ? undefined : { [ID_HEADER]: id } })
              if (id !== undefined) model.set(id, { offset, at: now })
            }
          } else {
            // As IdAppends does: a window reaching before what the table holds reads the log from its start.
            const from = now - s.window
            if (!table.covers(from)) {
              const at = log.find((r) => r.timestamp >= from)?.offset ?? log.length
              table.start(at, from)
            }
            table.syncTo(log.length)
            const plan = table.decide(s.ids, now, s.window)
            // The model's verdicts, in call order.
            const expected: Array<number | 'new'> = []
            const inCall = new Map<string, number>()
            let next = log.length
            for (const id of s.ids) {
              if (id === undefined) {
                expected.push('new')
                next++
                continue
              }
              const seen =
                inCall.get(id) ??
                (() => {
                  const m = model.get(id)
                  return m !== undefined && now - m.at <= s.window ? m.offset : undefined
                })()
              if (seen !== undefined) expected.push(seen)
              else {
                expected.push('new')
                inCall.set(id, next++)
              }
            }
            if (s.fails) {
              table.abandon(plan)
              continue
            }
            const base = log.length
            plan.fresh.forEach((i) => {
              const id = s.ids[i]
              log.push({
                offset: log.length,
                timestamp: now,
                headers: id === undefined ? undefined : { [ID_HEADER]: id },
              })
            })
            const results = table.stored(plan, base, now)
            for (const [i, id] of s.ids.entries()) {
              const e = expected[i]
              if (e === 'new') {
                expect(results[i]?.duplicate).toBe(false)
                if (id !== undefined) model.set(id, { offset: results[i]?.offset as number, at: now })
              } else expect(results[i]).toEqual({ offset: e, duplicate: true })
            }
            expect(results.filter((r) => !r.duplicate).map((r) => r.offset)).toEqual(
              Array.from({ length: plan.fresh.length }, (_, k) => base + k),
            )
          }
        }
      }),
      { numRuns: 300 },
    )
  })
})
