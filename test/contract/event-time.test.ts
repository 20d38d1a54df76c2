/**
 * Backend contract, event time: records whose timestamps do not grow with offsets (a send's own
 * `timestamp`). `offsetForTime(t)` is the first retained offset whose timestamp is ≥ t (the end
 * when none is), checked against that model on random logs, with trims; retention by age removes
 * only records older than the limit, oldest first.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { Backend } from '../../src/backends/backend.js'
import { readAll, records, topicMeta } from './fixture.js'
import { kinds, perTest } from './kinds.js'

const T0 = 1_700_000_000_000

/** Append one record per timestamp, in batches of the given sizes. */
async function appendStamped(b: Backend, topic: string, stamps: readonly number[], batch: number): Promise<void> {
  const meta = topicMeta(topic)
  for (let i = 0; i < stamps.length; i += batch) {
    const part = stamps.slice(i, i + batch)
    const recs = records(
      meta,
      part.map((_, k) => `v${i + k}`.padEnd(40, '.')),
    ).map((r, k) => ({ ...r, timestamp: part[k] as number }))
    await b.append(topic, 0, recs, 'p')
  }
}

/** The model: the first retained offset whose timestamp is ≥ `time`, else the end. */
function model(stored: ReadonlyArray<{ offset: number; timestamp: number }>, end: number, time: number): number {
  return stored.find((m) => m.timestamp >= time)?.offset ?? end
}

describe.each(kinds())('$name: event time', (kind) => {
  kind.hooks()
  const ctx = perTest(kind)

  it('offsetForTime is the first offset whose timestamp is at or after the time, whatever their order', async () => {
    const b = await ctx.fresh({ segmentBytes: 1024 })
    await b.createTopic(topicMeta('t'))
    //                  0        1        2        3        4        5        6
    await appendStamped(b, 't', [T0 + 50, T0 + 10, T0 + 90, T0 + 20, T0 + 60, T0 + 5, T0 + 95], 2)
    const at = (time: number) => b.offsetForTime('t', 0, time)
    expect(await at(T0)).toBe(0)
    expect(await at(T0 + 50)).toBe(0)
    expect(await at(T0 + 51)).toBe(2) // not 4 (the first after the newest of the earlier ones)
    expect(await at(T0 + 91)).toBe(6)
    expect(await at(T0 + 96)).toBe(7) // past every timestamp: the end
    expect(await at(T0 - 1_000)).toBe(0)
  })

  it('offsetForTime equals the model on random out-of-order logs (several segments, trims)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 200 }), { minLength: 1, maxLength: 80 }),
        fc.integer({ min: 1, max: 7 }),
        fc.option(fc.nat({ max: 80 }), { nil: undefined }),
        fc.array(fc.integer({ min: -5, max: 210 }), { minLength: 1, maxLength: 8 }),
        async (dts, batch, trim, times) => {
          const b = await ctx.fresh({ segmentBytes: 1024 })
          await b.createTopic(topicMeta('t'))
          await appendStamped(
            b,
            't',
            dts.map((d) => T0 + d),
            batch,
          )
          if (trim !== undefined && kind.caps.trim === 'exact') await b.trimBefore('t', 0, trim)
          const stored = await readAll(b, 't', 0, 10_000)
          const end = (await b.offsets('t'))[0]?.end as number
          for (const dt of times) expect(await b.offsetForTime('t', 0, T0 + dt)).toBe(model(stored, end, T0 + dt))
          await b.close()
        },
      ),
      { numRuns: 25 },
    )
  }, 120_000)

  if (kind.caps.trim === 'exact') {
    it('offsetForTime after trimming a record newer than those kept is still the model', async () => {
      const b = await ctx.fresh({ segmentBytes: 1024 })
      await b.createTopic(topicMeta('t'))
      // Offset 0 is far ahead of every later record; once it is trimmed, a seek must not stop at the start.
      await appendStamped(b, 't', [T0 + 10_000, T0 + 1, T0 + 2, T0 + 3, T0 + 4, T0 + 5], 1)
      await b.trimBefore('t', 0, 1)
      expect(await b.offsetForTime('t', 0, T0 + 3)).toBe(3)
      expect(await b.offsetForTime('t', 0, T0 + 6)).toBe(6)
      expect(await b.offsetForTime('t', 0, T0)).toBe(1)
    })
  }

  if (kind.caps.retention !== 'none') {
    it('retention by age removes records older than maxAgeMs, oldest first, by their timestamps', async () => {
      const b = await ctx.fresh({ segmentBytes: 1024 })
      const now = Date.now()
      const day = 86_400_000
      await b.createTopic(topicMeta('t', { retention: { maxAgeMs: day } }))
      // 30 records of three days ago, then 5 of now, then 30 more of three days ago (backfilled), then 5 of now.
      const old = Array.from({ length: 30 }, (_, i) => now - 3 * day + i)
      const fresh = Array.from({ length: 5 }, (_, i) => now + i)
      await appendStamped(b, 't', [...old, ...fresh, ...old, ...fresh], 1)
      await b.applyRetention('t')
      const kept = await readAll(b, 't', 0, 1000)
      const first = kept[0]?.offset as number
      // Nothing newer than the limit is removed, nor anything after it in the log.
      expect(kept.every((m) => m.offset >= first)).toBe(true)
      expect(kept.filter((m) => m.timestamp >= now)).toHaveLength(10)
      expect(first).toBeLessThanOrEqual(30)
      if (kind.caps.retention === 'exact') expect(first).toBe(30)
      else expect(first).toBeGreaterThan(0) // whole segments: the old ones before the first new record
    })
  }
})
