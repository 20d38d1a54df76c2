import { fstatSync, ftruncateSync, openSync } from 'node:fs'
import { APPEND_FLAGS, closeQuietly, writeAll } from './safe-fs.js'
import { HEADER_BYTES } from './batch-format.js'
import { FALLBACKS } from './segment-index.js'
import { TIME_ENTRY_BYTES, encodeTimeEntry, entryHolds, readTimeIndex, timeEntries, timeEntryAt } from './time-index.js'

/**
 * A writer's side of a segment's time index (time-index.ts): the largest timestamp of the records
 * frames so far, and the entries appended with it. Like the sparse index it is an optimisation: an
 * entry that cannot be written is dropped, and a file that cannot be opened (a symlink in its
 * place, no rights) means no more entries for this segment, never a failed send. The file is
 * opened for each entry (one per sparse-index entry, at most one per 64 KiB or frame), so an
 * appender still holds two fds.
 */
export class TimeIndexWriter {
  /**
   * @param max The largest `maxTimestamp` of the records frames of the segment before the bytes
   *   still to be scanned or written (-Infinity: none), or undefined when that is not known (the
   *   segment was written before decision 172, or its time index lags): then no entry is written.
   */
  constructor(
    private readonly path: string,
    private max: number | undefined,
  ) {}

  /**
   * The writer of time index `path` for segment `fd` (`size` bytes), opened with the lock held,
   * whose first scan starts at byte `from` (a frame of it). Entries at the end that point at or past
   * the segment's end are cut first: a power cut lost the segment's tail but not the index's, and
   * the frames written there next, at the same positions and offsets, must not meet them. Then
   * `max` is the `maxBefore` of the last entry that holds, when that entry is at or after `from`
   * (the scan adds the frames after it); else unknown, unless `from` is 0.
   */
  static resume(path: string, fd: number, size: number, from: number): TimeIndexWriter {
    const buf = readTimeIndex(path)
    let keep = timeEntries(buf)
    while (keep > 0 && !((timeEntryAt(buf, keep - 1)?.position ?? size) < size)) keep--
    if (keep * TIME_ENTRY_BYTES < buf.length) cut(path, keep * TIME_ENTRY_BYTES)
    if (from === 0) return new TimeIndexWriter(path, -Infinity)
    const head = Buffer.allocUnsafe(HEADER_BYTES)
    for (let i = keep - 1; i >= 0 && i > keep - 1 - FALLBACKS; i--) {
      const e = timeEntryAt(buf, i)
      if (e && entryHolds(fd, e, size, head)) return new TimeIndexWriter(path, e.position >= from ? e.maxBefore : undefined)
    }
    return new TimeIndexWriter(path, undefined)
  }

  /** Count a records frame, scanned or written (counting a misplaced one too only widens the bound). */
  saw(maxTimestamp: number): void {
    if (this.max !== undefined && maxTimestamp > this.max) this.max = maxTimestamp
  }

  /** Add the entry of the frame just written at `position` (first offset `offset`, `frameIdAt` `frameId`), before it is counted. */
  add(offset: number, position: number, frameId: number): void {
    if (this.max === undefined) return
    let fd: number
    try {
      fd = openSync(this.path, APPEND_FLAGS, 0o644)
    } catch {
      this.max = undefined
      return
    }
    let size = -1
    try {
      // A torn entry (a writer that died mid-write) would misalign every later one: cut it first.
      const got = fstatSync(fd).size
      size = got - (got % TIME_ENTRY_BYTES)
      if (size !== got) ftruncateSync(fd, size)
      const e = encodeTimeEntry({ offset, position, maxBefore: this.max, frameId })
      writeAll(fd, e, 0, e.length, null)
    } catch {
      try {
        if (size >= 0) ftruncateSync(fd, size)
      } catch {
        /* the next entry's writer cuts the torn bytes */
      }
    } finally {
      closeQuietly(fd)
    }
  }
}

/** Cut file `path` to `bytes` (best effort: a stale entry left is still checked before it is believed). */
function cut(path: string, bytes: number): void {
  try {
    const fd = openSync(path, APPEND_FLAGS, 0o644)
    try {
      ftruncateSync(fd, bytes)
    } finally {
      closeQuietly(fd)
    }
  } catch {
    /* see above */
  }
}
