/**
 * File time seeks walk frame headers (`frameForTime`) and decode one frame: on logs with timestamps
 * out of order (within frames and across them), several segments and trims, `offsetForTime` answers
 * exactly what the forward decode it replaced answers (segments binary-searched by their first
 * frame's first timestamp, then every message read from there to the first with `timestamp >= time`).
 */
import fc from 'fast-check'
import { afterAll, describe, expect, it } from 'vitest'
import { FileBackend } from '../../src/backends/file/file-backend.js'
import { partitionDir } from '../../src/backends/file/layout.js'
import { texts, topicMeta } from '../contract/fixture.js'
import { referenceOffsetForTime } from '../helpers/time-seek.js'
import { tempDir } from '../helpers/tmp.js'

const dirs: Array<() => void> = []
afterAll(() => {
  for (const rm of dirs.splice(0)) rm()
})

describe('file offsetForTime', () => {
  it('equals the full forward decode on random logs with out-of-order timestamps, segments and trims', async () => {
    const t0 = 1_700_000_000_000
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(fc.integer({ min: 0, max: 200 }), { minLength: 1, maxLength: 20 }), {
          minLength: 1,
          maxLength: 15,
        }),
        fc.integer({ min: 0, max: 60 }),
        fc.array(fc.integer({ min: -10, max: 210 }), { minLength: 1, maxLength: 12 }),
        async (batches, trim, times) => {
          const t = tempDir('twainmq-time-seek-')
          dirs.push(t.remove)
          const b = new FileBackend(t.dir, { pollMs: 50, segmentBytes: 1024 })
          await b.init()
          try {
            const meta = topicMeta('t')
            await b.createTopic(meta)
            for (const stamps of batches) {
              const recs = texts(meta, 'v', stamps.length).map((r, i) => ({
                ...r,
                timestamp: t0 + (stamps[i] as number),
              }))
              await b.append('t', 0, recs, 'p')
            }
            if (trim > 0) await b.trimBefore('t', 0, trim)
            const dir = partitionDir(t.dir, 't', 0)
            for (const dt of times)
              expect(await b.offsetForTime('t', 0, t0 + dt)).toBe(await referenceOffsetForTime(b, dir, 't', t0 + dt))
          } finally {
            await b.close()
          }
        },
      ),
      { numRuns: 60 },
    )
  })
})
