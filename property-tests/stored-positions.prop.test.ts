// Where an output partition stored a source's outputs (src/backends/stored-positions.ts) against a
// map model: positions set mostly rising (the usual calls), sometimes below the highest (a rewind's
// outputs), overwritten, and dropped below a floor that rises or falls; every lookup, the count of
// inputs held and the positions listed by input agree with the model.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { StoredPositions } from '../src/backends/stored-positions.js'

const seq = fc.oneof(fc.integer({ min: 0, max: 3 }), fc.constantFrom(2 ** 30, 2 ** 31 - 1))
const step = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('next' as const), gap: fc.integer({ min: 0, max: 3 }), seq }), weight: 6 },
  {
    arbitrary: fc.record({ kind: fc.constant('set' as const), offset: fc.integer({ min: 0, max: 40 }), seq }),
    weight: 2,
  },
  { arbitrary: fc.record({ kind: fc.constant('drop' as const), floor: fc.integer({ min: 0, max: 40 }) }), weight: 1 },
)

describe('stored positions', () => {
  it('holds what a map of positions holds', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 200 }), (steps) => {
        const held = new StoredPositions()
        const model = new Map<string, number>()
        let at = 0
        let offset = 0
        let floor = 0
        for (const s of steps) {
          if (s.kind === 'drop') {
            // As SourceTable.admit: a lower floor drops what the higher one passed.
            const cut = Math.max(floor, s.floor)
            held.drop(cut)
            for (const k of [...model.keys()]) if (Number(k.split('.')[0]) < cut) model.delete(k)
            floor = s.floor
            continue
          }
          const o = s.kind === 'next' ? (offset += s.gap) : s.offset
          if (o < floor) continue // SourceTable never stores below its floor
          held.set(o, s.seq, ++at)
          model.set(`${o}.${s.seq}`, at)
        }
        for (let o = 0; o <= Math.max(offset, 40) + 1; o++)
          for (const q of [0, 1, 2, 3, 2 ** 30, 2 ** 31 - 1])
            expect(o < floor ? undefined : held.get(o, q)).toBe(model.get(`${o}.${q}`))
        const listed = new Map<string, number>()
        let last = -1
        for (const [o, pairs] of held.byInput()) {
          expect(o).toBeGreaterThan(last)
          last = o
          for (let i = 0; i < pairs.length; i += 2) listed.set(`${o}.${pairs[i]}`, pairs[i + 1] as number)
        }
        expect(listed).toEqual(model)
        const inputs = new Set([...model.keys()].map((k) => k.split('.')[0]))
        // An input stored out of order may count twice: the count is a bound for checkpoints.
        expect(held.size).toBeGreaterThanOrEqual(inputs.size)
        expect(held.size).toBeLessThanOrEqual(2 * inputs.size)
      }),
      {
        numRuns: 300,
        examples: [
          // An input's first output dropped by a commit, its next one stored after: the input counts again.
          [
            [
              { kind: 'set', offset: 7, seq: 0 },
              { kind: 'next', gap: 3, seq: 2 ** 30 },
              { kind: 'drop', floor: 8 },
              { kind: 'next', gap: 3, seq: 2 ** 30 },
              { kind: 'drop', floor: 0 },
              { kind: 'next', gap: 1, seq: 2 ** 30 },
            ],
          ],
        ],
      },
    )
  })
})
