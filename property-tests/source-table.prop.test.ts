// The exactly-once rule of a processor's outputs (src/backends/source-table.ts) against a model:
// for any sequence of writer calls (two sources, lease epochs, committed offsets, positions
// repeated within and across calls, writes that fail) and checkpoints, a position is stored again
// only after a commit past its input offset made the partition forget it; a writer behind the
// stored epoch is refused and changes nothing. A table round-tripped through toJSON/fromJSON decides
// every call as the live one does; so does a table read back from the log as the file backend reads
// it (its last checkpoint, then `observe` of every output stored after it), the backend
// checkpointing at once a call that writes nothing but changes the table. A write that fails after
// its writer was admitted leaves a change the log does not tell: until the next checkpoint, a table
// read back may then admit a writer the live one fences and remember outputs the live one forgot —
// never the other way round, so it never stores a remembered output again. Sequence numbers
// include a timer turn's and a dead letter's (2^30 and up), which a checkpoint must hold too.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { IdempotentResult, OutputSource, SourcePosition } from '../src/backends/backend.js'
import { FencedError } from '../src/core/errors.js'
import { SourceTable } from '../src/backends/source-table.js'
import { parseSourceHeader, sourceHeader, sourceKey } from '../src/backends/source-header.js'

/** A stored output as the log holds it: its `x-twain-source` header, at its offset. */
interface LogRecord {
  header: string
  at: number
}

/** One source's state in the model. */
interface ModelSource {
  epoch: number
  floor: number
  /** `offset.seq` → where it is stored; forgotten (deleted) once the floor passes its offset. */
  stored: Map<string, number>
}

const seqs = fc.oneof(fc.integer({ min: 0, max: 2 }), fc.constantFrom(2 ** 30, 2 ** 30 + 1, 2 ** 31 - 1))

const call = fc.record({
  kind: fc.constant('call' as const),
  partition: fc.constantFrom(0, 1), // two sources (input partitions) writing to one output partition
  epoch: fc.integer({ min: 1, max: 4 }),
  committed: fc.integer({ min: 0, max: 6 }),
  // A message's outputs are numbered from 0; timer turns' from 2^30; a dead letter is 2^31 - 1.
  positions: fc.array(fc.record({ offset: fc.integer({ min: 0, max: 8 }), seq: seqs }), {
    minLength: 1,
    maxLength: 5,
  }),
  /** The write of the fresh ones fails (the decision was made, nothing stored). */
  fails: fc.boolean(),
})
/** The file backend writes its checkpoint (the table as JSON, and the log offset it covers). */
const checkpoint = fc.record({ kind: fc.constant('checkpoint' as const) })
const steps = fc.array(fc.oneof({ arbitrary: call, weight: 5 }, { arbitrary: checkpoint, weight: 1 }), {
  maxLength: 40,
})

type Outcome = 'fenced' | IdempotentResult[]

/** Decide and store a call on `table` as a backend does (`base` undefined: the write failed). */
function apply(
  table: SourceTable,
  source: OutputSource,
  positions: SourcePosition[],
  base: number | undefined,
): Outcome {
  let plan
  try {
    plan = table.decide('out', 0, source, positions)
  } catch (e) {
    expect(e).toBeInstanceOf(FencedError)
    return 'fenced'
  }
  return table.stored(source, positions, plan, plan.fresh.length > 0 ? base : undefined)
}

/** The table read back from `log[from..]` on top of `checkpoint` (JSON text of `toJSON`), as the file backend does. */
function rebuild(checkpoint: string | undefined, log: readonly LogRecord[], from: number): SourceTable {
  const t = checkpoint === undefined ? new SourceTable() : SourceTable.fromJSON(JSON.parse(checkpoint))
  for (const r of log.slice(from)) {
    const p = parseSourceHeader(r.header)
    if (p === undefined) throw new Error(`bad header ${r.header}`)
    t.observe(p.key, p.epoch, p.committed, p.offset, p.seq, r.at)
  }
  return t
}

describe('SourceTable against a model', () => {
  it('stores a position once while remembered, fences lower epochs, and decides as a rebuilt table does', () => {
    fc.assert(
      fc.property(steps, (ss) => {
        const log: LogRecord[] = []
        const live = new SourceTable()
        const model = new Map<string, ModelSource>()
        /** Every position ever stored, and whether a floor passed it since (it may be stored again). */
        const history = new Map<string, { forgotten: boolean }>()
        let saved: { json: string; covered: number } | undefined
        /** A call since the checkpoint changed the live table and stored nothing: the log cannot tell. */
        let unlogged = false
        for (const s of ss) {
          if (s.kind === 'checkpoint') {
            saved = { json: JSON.stringify(live.toJSON()), covered: log.length }
            unlogged = false
            continue
          }
          const source: OutputSource = {
            group: 'g',
            topic: 'in',
            partition: s.partition,
            incarnation: 1,
            epoch: s.epoch,
            committed: s.committed,
            deadline: Infinity,
          }
          const key = sourceKey(source)
          const base = s.fails ? undefined : log.length
          // Tables read back now (throwaway copies: each sees this call as the live one does).
          const json = SourceTable.fromJSON(JSON.parse(JSON.stringify(live.toJSON())))
          const read = rebuild(saved?.json, log, saved?.covered ?? 0)
          const before = JSON.stringify(live.toJSON())
          const logEnd = log.length
          const outcome = apply(live, source, s.positions, base)

          // The model: the epoch rule, the floor, and what is remembered.
          let m = model.get(key)
          if (m !== undefined && s.epoch < m.epoch) {
            expect(outcome).toBe('fenced')
          } else {
            if (m === undefined) model.set(key, (m = { epoch: s.epoch, floor: s.committed, stored: new Map() }))
            else {
              m.floor = s.epoch > m.epoch ? s.committed : Math.max(m.floor, s.committed)
              m.epoch = s.epoch
            }
            const floor = m.floor
            for (const id of [...m.stored.keys()]) {
              if (p0(id) < floor) {
                m.stored.delete(id)
                const h = history.get(`${key} ${id}`)
                if (h) h.forgotten = true
              }
            }
            expect(outcome).not.toBe('fenced')
            const results = outcome as IdempotentResult[]
            const fresh = new Map<string, number>()
            s.positions.forEach((p, i) => {
              const id = `${p.offset}.${p.seq}`
              const r = results[i] as IdempotentResult
              const known = (m as ModelSource).stored.get(id)
              if (known !== undefined) {
                expect(r).toEqual({ offset: known, duplicate: true })
                return
              }
              if (base === undefined) return // the write failed: nothing to check of where
              const inCall = fresh.get(id)
              if (inCall !== undefined) {
                expect(r).toEqual({ offset: inCall, duplicate: true })
                return
              }
              // A new record: never one of a position stored before and still remembered.
              const h = history.get(`${key} ${id}`)
              expect(h === undefined || h.forgotten, `${key} ${id} stored twice while remembered`).toBe(true)
              history.set(`${key} ${id}`, { forgotten: p.offset < floor })
              expect(r).toEqual({ offset: log.length, duplicate: false })
              fresh.set(id, log.length)
              log.push({ header: sourceHeader(source, p), at: log.length })
            })
            if (base !== undefined) for (const [id, at] of fresh) if (p0(id) >= floor) m.stored.set(id, at)
          }

          expect(apply(json, source, s.positions, base), 'a table from JSON').toEqual(outcome)
          const fromLog = apply(read, source, s.positions, base)
          if (!unlogged) expect(fromLog, 'a table read back from the log').toEqual(outcome)
          else if (fromLog !== 'fenced' && outcome !== 'fenced') {
            // Never less careful: what the live table finds stored, the table read back finds too.
            // (Of a call whose write failed, a repeat of a position earlier in the call names where
            // that one would have gone, not a stored output: a backend reports no result then.)
            outcome.forEach((r, i) => {
              const p = s.positions[i] as SourcePosition
              const repeat = s.positions.findIndex((q) => q.offset === p.offset && q.seq === p.seq) < i
              if (r.duplicate && r.offset < logEnd && !(base === undefined && repeat)) expect(fromLog[i]).toEqual(r)
            })
          } else if (fromLog === 'fenced') expect(outcome).toBe('fenced')
          if (log.length === logEnd && JSON.stringify(live.toJSON()) !== before) {
            // As the file backend does (source-appends.ts): a call that has nothing to write and
            // changed the table checkpoints it at once; a write that failed leaves the change unlogged.
            if (outcome !== 'fenced' && outcome.every((r) => r.duplicate)) {
              saved = { json: JSON.stringify(live.toJSON()), covered: log.length }
              unlogged = false
            } else unlogged = true
          }
        }
      }),
      {
        numRuns: 500,
        examples: [
          // A failed call repeating a position within itself, after a failed call that raised the
          // floor unlogged: the repeat's result names no stored output.
          [
            [
              {
                kind: 'call',
                partition: 0,
                epoch: 1,
                committed: 0,
                positions: [
                  { offset: 4, seq: 2 ** 30 + 1 },
                  { offset: 0, seq: 2 ** 30 },
                ],
                fails: false,
              },
              {
                kind: 'call',
                partition: 0,
                epoch: 1,
                committed: 5,
                positions: [{ offset: 0, seq: 2 ** 30 }],
                fails: true,
              },
              {
                kind: 'call',
                partition: 0,
                epoch: 1,
                committed: 0,
                positions: [
                  { offset: 0, seq: 0 },
                  { offset: 4, seq: 2 ** 30 + 1 },
                  { offset: 4, seq: 2 ** 30 + 1 },
                  { offset: 0, seq: 2 ** 30 },
                ],
                fails: true,
              },
            ],
          ],
        ],
      },
    )
  })
})

const p0 = (id: string): number => Number(id.split('.')[0])
