import fc from 'fast-check'
import fs from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checkPartition } from '../src/backends/file/check.js'
import { repairPartition } from '../src/backends/file/repair.js'
import { open } from '../src/index.js'
import {
  TOPIC,
  damageArb,
  damagedCopy,
  drain,
  essence,
  frames,
  makeTopic,
  type Damaged,
} from '../test/helpers/damage.js'

/*
 * Repair after any single byte flip or cut of a segment: check is clean afterwards, every record
 * kept is identical at its offset, nothing read before the damage is lost, and only the damaged
 * frames are: at most one record for a flip, the rest of the cut segment for a cut.
 */

let pristine: Damaged
beforeAll(async () => {
  pristine = await makeTopic(60, 1024) // one record per frame, about 7 per segment
})
afterAll(() => fs.rmSync(pristine.root, { recursive: true, force: true }))

/** Records frames of pristine segment `i` (without its seal). */
function recordFrames(i: number) {
  const next = pristine.segs[i + 1]
  const all = frames(pristine.segs[i] as string)
  return next === undefined ? all : all.filter((f) => f.base < Number(next.slice(-24, -4)))
}

describe('repair properties', () => {
  it('after any single byte flip or cut, repair leaves a clean check, every kept record identical at its offset, and loses only the damaged frames', async () => {
    await fc.assert(
      fc.asyncProperty(damageArb, async (dmg) => {
        const { root, i, whole, dir } = damagedCopy(pristine, dmg)
        const twain = await open(root)
        try {
          const before = await drain(twain.history(TOPIC), 20_000)
          if (before.error !== undefined) expect(checkPartition(dir, 0, TOPIC).damage.length).toBeGreaterThan(0)
          await repairPartition(dir, 0, TOPIC)
          expect(checkPartition(dir, 0, TOPIC).damage).toEqual([])
          const after = await drain(twain.history(TOPIC), 20_000)
          expect(after.error).toBeUndefined()
          const truth = new Map(pristine.truth.map((m) => [m.offset, essence(m)]))
          for (const m of after.msgs) expect(essence(m)).toEqual(truth.get(m.offset))
          expect(after.msgs.slice(0, before.msgs.length).map(essence)).toEqual(before.msgs.map(essence))
          if (dmg.kind === 'flip') {
            expect(after.msgs.length).toBeGreaterThanOrEqual(pristine.truth.length - 1)
            expect((await twain.producer<string>(TOPIC).send(1, 'new')).offset).toBeGreaterThanOrEqual(
              pristine.truth.length,
            )
          } else {
            // A cut loses the records of the cut segment from the cut on, nothing else.
            const inSeg = recordFrames(i)
            const kept = whole.filter((f) => inSeg.some((g) => g.pos === f.pos)).length
            expect(after.msgs.length).toBe(pristine.truth.length - inSeg.length + kept)
          }
        } finally {
          await twain.close()
          fs.rmSync(root, { recursive: true, force: true })
        }
      }),
      { numRuns: 80 },
    )
  }, 120_000) // 80 stores opened, damaged and repaired: 5 s idle, 14 s on a loaded machine
})
