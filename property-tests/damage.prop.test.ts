import fc from 'fast-check'
import fs from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TopicCorruptError, open } from '../src/index.js'
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
 * Whatever single byte of a segment is flipped, and wherever a segment is cut, a reader never
 * returns a wrong record: it returns a prefix of the true records, each identical, then either
 * stops (only when the last segment, the active one, was cut: indistinguishable from a write in
 * progress) or throws TopicCorruptError.
 */

let pristine: Damaged
beforeAll(async () => {
  pristine = await makeTopic(60, 1024) // one record per frame, about 7 per segment
})
afterAll(() => fs.rmSync(pristine.root, { recursive: true, force: true }))

describe('damage properties', () => {
  it('any single byte flip or truncation of a segment never yields a wrong record: a prefix of the true records, then a stop (a cut active segment only) or TopicCorruptError', async () => {
    expect(pristine.segs.length).toBeGreaterThan(5)
    await fc.assert(
      fc.asyncProperty(damageArb, async (dmg) => {
        const { root, segs, i, whole } = damagedCopy(pristine, dmg)
        const twain = await open(root)
        try {
          const r = await drain(twain.history(TOPIC), 20_000)
          expect(r.timedOut).toBe(false)
          expect(r.msgs.map(essence)).toEqual(pristine.truth.slice(0, r.msgs.length).map(essence))
          if (r.error === undefined) {
            expect(dmg.kind).toBe('cut')
            expect(i).toBe(segs.length - 1)
            const before = segs.slice(0, i).reduce((n, s) => n + frames(s).length - 1, 0) // each ends with its seal
            expect(r.msgs.length).toBe(before + whole.length)
          } else expect(r.error).toBeInstanceOf(TopicCorruptError)
        } finally {
          await twain.close()
          fs.rmSync(root, { recursive: true, force: true })
        }
      }),
      { numRuns: 150 },
    )
  })
})
