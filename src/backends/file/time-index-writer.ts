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
 * opened with the first entry (one per sparse-index entry, at most one per 64 KiB or frame) and
 * kept open with the segment, the appender's third fd (opening it for every entry cost a sendBatch
 * ~10% of its speed).
 */
export class TimeIndexWriter {
  /**
   * @param max The largest `maxTimestamp` of the records frames of the segment before the bytes
   *   still to be scanned or written (-Infinity: none), or undefined when that is not known (the
   *   segment was written before decision 172, or its time index lags): then no entry is written.
   */
  /** The file, open from the first entry written until the segment is closed (-1: not open). */
  private fd = -1
  /** Bytes of whole entries in the file while it is open. */
  private size = 0

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
      if (e && entryHolds(fd, e, size, head))
        return new TimeIndexWriter(path, e.position >= from ? e.maxBefore : undefined)
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
    if (this.fd < 0 && !this.open()) return
    const e = encodeTimeEntry({ offset, position, maxBefore: this.max, frameId })
    try {
      writeAll(this.fd, e, 0, e.length, null)
      this.size += e.length
    } catch {
      // A torn entry would misalign every later one: cut it, and write no more for this segment.
      try {
        ftruncateSync(this.fd, this.size)
      } catch {
        /* the next writer opening the index cuts the torn bytes */
      }
      this.close()
      this.max = undefined
    }
  }

  /** Open the file for appending, cutting a torn entry at its end (a writer that died mid-write); false when it cannot be. */
  private open(): boolean {
    try {
      this.fd = openSync(this.path, APPEND_FLAGS, 0o644)
      const got = fstatSync(this.fd).size
      this.size = got - (got % TIME_ENTRY_BYTES)
      if (this.size !== got) ftruncateSync(this.fd, this.size)
      return true
    } catch {
      this.close()
      this.max = undefined
      return false
    }
  }

  /** Close the file (it is opened again by the next entry). */
  close(): void {
    if (this.fd >= 0) closeQuietly(this.fd)
    this.fd = -1
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
