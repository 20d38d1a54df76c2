// One generation of the file backend's id table (src/backends/file/id-generation.ts), an
// open-addressing hash table in typed arrays, against a Map: for any sequence of adds, updates,
// removals, compactions and lookups of ids (enough of them to grow the table several times and to crowd its
// probe sequences), every lookup finds what the Map holds, with its offset and time.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { IdGeneration, idHash } from '../src/backends/file/id-generation.js'

// Pairs of ids with the same hash (found by a search over `c-<n>`): the table must tell them apart.
const COLLIDING = [
  ['c-308475', 'c-1293310'],
  ['c-308474', 'c-1293311'],
  ['c-308477', 'c-1293312'],
]
const id = fc.oneof(
  fc.integer({ min: 0, max: 3000 }).map((n) => `id-${n}`),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }),
  fc.constantFrom(...COLLIDING.flat()),
)
const op = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('put' as const), id, offset: fc.nat(), at: fc.nat() }), weight: 6 },
  { arbitrary: fc.record({ kind: fc.constant('remove' as const), id }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('find' as const), id }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('compact' as const) }), weight: 1 },
)

describe('IdGeneration against a Map', () => {
  it('is given ids whose hashes collide', () => {
    for (const [a, b] of COLLIDING) expect(idHash(a as string)).toBe(idHash(b as string))
  })

  it('finds every id it holds, with its offset and time, and none it does not', () => {
    fc.assert(
      fc.property(fc.array(op, { minLength: 1500, maxLength: 4000 }), (ops) => {
        const gen = new IdGeneration()
        const model = new Map<string, { offset: number; at: number }>()
        for (const o of ops) {
          if (o.kind === 'compact') {
            gen.compact()
            expect([gen.size, gen.live]).toEqual([model.size, model.size])
            continue
          }
          const h = idHash(o.id)
          const e = gen.find(o.id, h)
          const m = model.get(o.id)
          expect(e >= 0).toBe(m !== undefined)
          if (m !== undefined) expect([gen.offsetOf(e), gen.atOf(e)]).toEqual([m.offset, m.at])
          if (o.kind === 'put') {
            if (e >= 0) gen.set(e, o.offset, o.at)
            else gen.add(o.id, h, o.offset, o.at)
            model.set(o.id, { offset: o.offset, at: o.at })
          } else if (o.kind === 'remove') {
            gen.remove(o.id, h)
            model.delete(o.id)
          }
        }
        for (const [k, m] of model) {
          const e = gen.find(k, idHash(k))
          expect([gen.offsetOf(e), gen.atOf(e)]).toEqual([m.offset, m.at])
        }
        const times = [...model.values()].map((m) => m.at)
        if (times.length > 0) expect(gen.newest).toBeGreaterThanOrEqual(Math.max(...times))
      }),
      { numRuns: 60 },
    )
  })
})
