// The file backend's id table (src/backends/file/id-table.ts) where its generations turn over:
// other processes' ids with old timestamps (an event time given as `timestamp`) must not make it
// drop its window's ids and read the log again on every call, nor must a first reading of a long
// window; writes that fail and are retried with the same ids must not grow it past its bound.
import { describe, expect, it } from 'vitest'
import { IdTable } from '../../src/backends/file/id-table.js'
import { outcomeResults } from '../../src/backends/outcome.js'
import { ID_HEADER } from '../../src/backends/record.js'
import { idLogSource, type IdLogRecord } from '../helpers/id-log.js'

const WINDOW = 300_000
const YEAR = 365 * 86_400_000

describe('IdTable', () => {
  it('keeps its window, without reading the log again, when others append ids with old timestamps', () => {
    const log: IdLogRecord[] = []
    const table = new IdTable(idLogSource(log))
    let now = 1_800_000_000_000
    let starts = 0
    /** One idempotent call of this process, as IdAppends makes it; the results. */
    const call = (ids: string[]) => {
      const from = now - WINDOW
      if (!table.covers(from)) {
        starts++
        table.start(log.find((r) => r.timestamp >= from)?.offset ?? log.length, from)
      }
      table.syncTo(log.length)
      const plan = table.decide(ids, now, WINDOW)
      const base = log.length
      for (const i of plan.fresh)
        log.push({ offset: log.length, timestamp: now, headers: { [ID_HEADER]: ids[i] as string } })
      return outcomeResults(table.stored(plan, base, now))
    }
    const other = (id: string, timestamp: number) =>
      log.push({ offset: log.length, timestamp, headers: { [ID_HEADER]: id } })

    call(['a'])
    for (let i = 0; i < 20; i++) {
      now += 1000
      other(`old-${i}`, now - YEAR)
      call([`mine-${i}`])
    }
    // The first call read the (empty) window; none since.
    expect(starts).toBe(1)
    // Every id of the window is still a duplicate; the old ones are judged by their timestamps.
    now += 1000
    const again = call(['a', 'mine-0', 'mine-19', 'old-3'])
    expect(again.map((r) => r.duplicate)).toEqual([true, true, true, false])
    expect(starts).toBe(1)
  })

  it('does not read its window again when the first reading of it turned generations over', () => {
    const log: IdLogRecord[] = []
    const table = new IdTable(idLogSource(log), 3) // generations of 3 ids
    // The machine's clock: a turnover while reading the log is timed by it.
    let now = Date.now()
    // Read in two batches of at most 4096 records: two turnovers before the call's decision.
    for (let i = 0; i < 5000; i++)
      log.push({ offset: i, timestamp: now - 10_000 + i, headers: { [ID_HEADER]: `o${i}` } })
    table.start(0, now - WINDOW)
    table.syncTo(log.length, WINDOW)
    table.stored(table.decide(['a'], now, WINDOW), log.length, now)
    log.push({ offset: log.length, timestamp: now, headers: { [ID_HEADER]: 'a' } })
    now += 1000
    expect(table.covers(now - WINDOW)).toBe(true)
  })

  it('stays within its bound while writes fail and are retried with the same ids', () => {
    const log: IdLogRecord[] = []
    const table = new IdTable(idLogSource(log))
    const now = 1_800_000_000_000
    table.start(0, now - WINDOW)
    const ids = Array.from({ length: 100 }, (_, i) => `id-${i}`)
    // A disk that refuses every write: each call's ids enter the table pending and leave it.
    for (let k = 0; k < 3000; k++) {
      table.syncTo(log.length, WINDOW)
      table.abandon(table.decide(ids, now, WINDOW))
    }
    expect(table.entries()).toBeLessThan(3000)
    // Then the write goes through: stored once, and known as stored.
    table.syncTo(log.length, WINDOW)
    const plan = table.decide(ids, now, WINDOW)
    expect(plan.fresh).toHaveLength(100)
    const first = outcomeResults(table.stored(plan, 0, now))
    expect(first.every((r) => !r.duplicate)).toBe(true)
    const again = outcomeResults(table.stored(table.decide(ids, now, WINDOW), 100, now))
    expect(again.map((r) => r.offset)).toEqual(first.map((r) => r.offset))
    expect(again.every((r) => r.duplicate)).toBe(true)
  })
})
