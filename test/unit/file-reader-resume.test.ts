/**
 * The file reader continues a read that stopped inside a frame where it stopped (no CRC check or
 * record scan again, `FrameResume`): whatever the read sizes, seeks, raw/decoded mix and fd closes
 * between them, a sequence of reads returns exactly the records one full read returns.
 */
import fc from 'fast-check'
import { afterAll, describe, expect, it } from 'vitest'
import { FileBackend } from '../../src/backends/file/file-backend.js'
import { rawBudget, type RawRecord } from '../../src/backends/record.js'
import { texts, topicMeta } from '../contract/fixture.js'
import { tempDir } from '../helpers/tmp.js'

const dirs: Array<() => void> = []
afterAll(() => {
  for (const rm of dirs.splice(0)) rm()
})

type Step =
  | { kind: 'read' | 'raw'; max: number; bytes?: number | undefined }
  | { kind: 'seek'; to: number }
  | { kind: 'closeFds' }

const step = (total: number): fc.Arbitrary<Step> =>
  fc.oneof(
    {
      weight: 6,
      arbitrary: fc.record({
        kind: fc.constantFrom('read' as const, 'raw' as const),
        max: fc.integer({ min: 1, max: 40 }),
      }),
    },
    // A raw read within a byte budget (values are 2–4 bytes): it may stop inside a frame.
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant('raw' as const),
        max: fc.integer({ min: 1, max: 40 }),
        bytes: fc.integer({ min: 0, max: 60 }),
      }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('seek' as const), to: fc.integer({ min: 0, max: total }) }) },
    { weight: 1, arbitrary: fc.constant({ kind: 'closeFds' as const }) },
  )

describe('file reader: reads continued inside frames', () => {
  it('return exactly the records a full read returns, across frames, segments, seeks and fd closes', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 1, max: 30 }), { minLength: 1, maxLength: 12 }).chain((batches) => {
          const total = batches.reduce((a, b) => a + b, 0)
          return fc.tuple(fc.constant(batches), fc.array(step(total), { minLength: 1, maxLength: 40 }))
        }),
        async ([batches, steps]) => {
          const t = tempDir('twainmq-resume-')
          dirs.push(t.remove)
          // Small segments: some reads continue across seals into the next segment.
          const b = new FileBackend(t.dir, { pollMs: 50, segmentBytes: 2048 })
          await b.init()
          try {
            const meta = topicMeta('t')
            await b.createTopic(meta)
            let total = 0
            for (const n of batches) {
              await b.append(
                't',
                0,
                texts(meta, 'v', n).map((r, i) => ({ ...r, value: Buffer.from(`v${total + i}`) })),
                'p',
              )
              total += n
            }
            const r = await b.openReader('t', 0, 0)
            let expected = 0
            for (const s of steps) {
              if (s.kind === 'seek') {
                r.seek(s.to)
                expected = s.to
              } else if (s.kind === 'closeFds') (r as unknown as { closeFds(): void }).closeFds()
              else {
                const budget = s.bytes === undefined ? undefined : rawBudget(s.bytes)
                const got =
                  s.kind === 'raw'
                    ? await (r.readRaw as NonNullable<typeof r.readRaw>)(s.max, budget)
                    : await r.read(s.max)
                if (budget && got.length > 1)
                  expect((got as RawRecord[]).reduce((n, x) => n + x.end - x.start, 0)).toBeLessThanOrEqual(
                    s.bytes as number,
                  )
                // At most `max`; fewer only where a raw read stops at the end of its buffer, never none while records remain.
                expect(got.length).toBeLessThanOrEqual(Math.min(s.max, total - expected))
                if (expected < total) expect(got.length).toBeGreaterThan(0)
                for (const m of got) {
                  expect(m.offset).toBe(expected)
                  if (s.kind === 'read') expect(String((m as { value: unknown }).value)).toBe(`v${expected}`)
                  expected++
                }
              }
              expect(r.next).toBe(expected)
            }
            await r.close()
          } finally {
            await b.close()
          }
        },
      ),
      { numRuns: 60 },
    )
  })
})
