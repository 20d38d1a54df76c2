import type { IdSource } from '../../src/backends/file/id-table.js'

/** A record of a partition's log as the file backend's id table reads it. */
export interface IdLogRecord {
  offset: number
  timestamp: number
  headers: Record<string, string> | undefined
}

/** The partition's log, read through an id table's source as the file reader would give it. */
export function idLogSource(log: IdLogRecord[]): IdSource {
  let at = 0
  return {
    next: (max) => {
      const i = log.findIndex((r) => r.offset >= at)
      const got = i < 0 ? [] : log.slice(i, i + max)
      if (got.length > 0) at = (got[got.length - 1] as IdLogRecord).offset + 1
      return got
    },
    seek: (offset) => void (at = offset),
    close: () => undefined,
  }
}
