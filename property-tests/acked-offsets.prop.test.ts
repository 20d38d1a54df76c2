// The offsets a partition holds acked out of order (AckedOffsets, a bitmap from a moving base)
// against a Set: offsets added, looked up and deleted around a point that moves up (as a partition's
// first outstanding offset does), with jumps far above it, offsets below the base, and clears. Each
// answer (has, delete, size) is the Set's; runs are long enough to move the base, double the words
// and shift them both ways.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { AckedOffsets } from '../src/consumer/partitioned/acked-offsets.js'

type Op =
  | { kind: 'add'; at: number }
  | { kind: 'delete'; at: number }
  | { kind: 'has'; at: number }
  | { kind: 'pass'; n: number }
  | { kind: 'clear' }

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 8, arbitrary: fc.record({ kind: fc.constant('add' as const), at: fc.integer({ min: -40, max: 300 }) }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('add' as const), at: fc.integer({ min: 300, max: 200_000 }) }),
  },
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('delete' as const), at: fc.integer({ min: -40, max: 300 }) }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('has' as const), at: fc.integer({ min: -80, max: 2000 }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('pass' as const), n: fc.integer({ min: 1, max: 500 }) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'clear' as const }) },
)

describe('AckedOffsets (model: a Set)', () => {
  it('answers has, delete and size as a Set of the same offsets does', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 ** 40 }),
        fc.array(opArb, { minLength: 50, maxLength: 600 }),
        (start, ops) => {
          const bits = new AckedOffsets()
          const model = new Set<number>()
          /** The point offsets are chosen around (never below 0): it moves up as the head of a partition does. */
          let point = start
          for (const op of ops) {
            if (op.kind === 'pass') {
              // The point passes offsets: those held below it go, lowest first.
              const to = point + op.n
              for (const o of [...model].sort((a, b) => a - b)) {
                if (o >= to) break
                expect(bits.delete(o), `delete of passed ${o}`).toBe(true)
                model.delete(o)
              }
              point = to
              expect([...bits.held()]).toEqual([...model].sort((a, b) => a - b))
              continue
            }
            if (op.kind === 'clear') {
              bits.clear()
              model.clear()
              continue
            }
            const o = Math.max(0, point + op.at)
            if (op.kind === 'add') {
              if (model.has(o)) continue // added once: the partition adds an offset not held
              bits.add(o)
              model.add(o)
            } else if (op.kind === 'delete') expect(bits.delete(o), `delete of ${o}`).toBe(model.delete(o))
            else expect(bits.has(o), `has ${o}`).toBe(model.has(o))
            expect(bits.size).toBe(model.size)
          }
          expect([...bits.held()]).toEqual([...model].sort((a, b) => a - b))
          for (let o = Math.max(0, point - 64); o < point + 400; o++) expect(bits.has(o)).toBe(model.has(o))
        },
      ),
      { numRuns: 300 },
    )
  })
})
