// The file backend's id table (src/backends/file/id-table.ts) over records whose timestamps are
// far in the past (another process's sends with an event time given as `timestamp`): their ids
// are judged by those timestamps, and they must not make the table drop the ids of its own window
// and read the log again on every call.
import { describe, expect, it } from 'vitest'
import { IdTable, outcomeResults, type IdSource } from '../../src/backends/file/id-table.js'
import { ID_HEADER } from '../../src/backends/record.js'

interface LogRecord {
  offset: number
  timestamp: number
  headers: Record<string, string> | undefined
}

function logSource(log: LogRecord[]): IdSource {
  let at = 0
  return {
    next: (max) => {
      const got = log.filter((r) => r.offset >= at).slice(0, max)
      if (got.length > 0) at = (got[got.length - 1] as LogRecord).offset + 1
      return got
    },
    seek: (offset) => void (at = offset),
    close: () => undefined,
  }
}

const WINDOW = 300_000
const YEAR = 365 * 86_400_000

describe('IdTable', () => {
  it('keeps its window, without reading the log again, when others append ids with old timestamps', () => {
    const log: LogRecord[] = []
    const table = new IdTable(logSource(log))
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
})
