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

  it('keeps every position through long runs, the arrays grown, moved down and shrunk by drops', () => {
    // Thousands of rising positions between commits: the arrays double as they fill, a drop past
    // half of them moves the rest to the front, and arrays four times larger than needed halve.
    const op = fc.oneof(
      fc.record({
        kind: fc.constant('run' as const),
        n: fc.integer({ min: 1, max: 3000 }),
        outputs: fc.integer({ min: 1, max: 3 }),
      }),
      fc.record({
        kind: fc.constant('drop' as const),
        part: fc.oneof(fc.double({ min: 0, max: 1, noNaN: true }), fc.constant(1)),
      }),
    )
    fc.assert(
      fc.property(fc.array(op, { minLength: 1, maxLength: 12 }), (ops) => {
        const held = new StoredPositions()
        const model = new Map<number, number[]>()
        let next = 0
        let floor = 0
        let at = 0
        for (const o of ops) {
          if (o.kind === 'drop') {
            // A commit somewhere between the floor and the highest input.
            floor = Math.max(floor, Math.floor(floor + (next - floor) * o.part))
            held.drop(floor)
            for (const k of [...model.keys()]) if (k < floor) model.delete(k)
            continue
          }
          for (let i = 0; i < o.n; i++, next++) {
            const stored: number[] = []
            for (let q = 0; q < o.outputs; q++) {
              held.set(next, q, ++at)
              stored.push(at)
            }
            model.set(next, stored)
          }
        }
        // Compared in plain loops, the first few differences reported (an expect per lookup is slow).
        const wrong: string[] = []
        for (let offset = floor; offset < next && wrong.length < 5; offset++) {
          const stored = model.get(offset) as number[]
          for (let q = 0; q < 4; q++) {
            const got = held.get(offset, q)
            if (got !== stored[q]) wrong.push(`get(${offset}, ${q}) = ${got}, stored ${stored[q]}`)
          }
        }
        let inputs = 0
        for (const [offset, pairs] of held.byInput()) {
          const want = (model.get(offset) ?? []).flatMap((s, q) => [q, s])
          if (pairs.join() !== want.join() && wrong.length < 5)
            wrong.push(`input ${offset}: [${pairs.join()}], stored [${want.join()}]`)
          inputs++
        }
        expect(wrong).toEqual([])
        expect(held.size).toBe(model.size)
        expect(inputs).toBe(model.size)
      }),
      { numRuns: 60 },
    )
  })
})
