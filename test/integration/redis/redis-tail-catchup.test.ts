// A Redis tail from 'start' over a stored backlog reads it page after page: a partition reader
// returns all it was asked for while the partition goes on (a page cut at one script call's 1,024
// records is not the end). Before, the tail took each such page for the end and waited for a
// wake-up that comes only for new appends: 1,024 records per partition, then a 5 s block time-out,
// over and over (8,192 of 150,000 records in 60 s). Compared with `history()` over the same backlog
// in the same run, so the bound is a ratio, not a speed of this machine.
import { describe, expect, it } from 'vitest'
import { useRedisTwain } from '../../helpers/redis-twain.js'

const ctx = useRedisTwain('catchup:')
const RECORDS = 150_000
const PARTITIONS = 4
/** The issue's goal: a tail catches up at no less than this share of `history()`'s speed. */
const MIN_RATIO = 0.3

describe('Redis tail catch-up', () => {
  it(`a tail from 'start' over ${RECORDS} stored records keeps at least ${MIN_RATIO}x the pace of history() over them`, async () => {
    await ctx.twain.createTopic('backlog', { partitions: PARTITIONS })
    const p = ctx.twain.producer<number>('backlog')
    for (let i = 0; i < RECORDS; i += 2000)
      await p.sendBatch(Array.from({ length: 2000 }, (_, j) => ({ key: (i + j) % 1000, value: i + j })))

    let t0 = performance.now()
    let read = 0
    for await (const m of ctx.twain.history<number>('backlog')) {
      if (typeof m.value === 'number') read++
    }
    const historyMs = performance.now() - t0
    expect(read).toBe(RECORDS)

    // At MIN_RATIO the tail may take history's time / MIN_RATIO; past twice that it has stalled.
    const giveUpMs = Math.max(10_000, (2 * historyMs) / MIN_RATIO)
    const seen = new Set<number>()
    const stop = new AbortController()
    const timer = setTimeout(() => stop.abort(), giveUpMs)
    t0 = performance.now()
    try {
      for await (const m of ctx.twain.tail<number>('backlog', { from: 'start', signal: stop.signal })) {
        seen.add(m.value)
        if (seen.size === RECORDS) break
      }
    } catch (e) {
      if (!stop.signal.aborted) throw e
    } finally {
      clearTimeout(timer)
    }
    const tailMs = performance.now() - t0
    const figures = `history ${Math.round(historyMs)} ms, tail ${Math.round(tailMs)} ms for ${seen.size} of ${RECORDS}`
    expect(seen.size, figures).toBe(RECORDS)
    expect(historyMs / tailMs, figures).toBeGreaterThanOrEqual(MIN_RATIO)
  }, 120_000)
})
