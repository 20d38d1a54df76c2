import { closeSync, fstatSync, openSync, readSync } from 'node:fs'
import { FLAG_SEAL, HEADER_BYTES, readFrameHeader } from './batch-format.js'
import { segmentPath, timeIndexPath } from './layout.js'
import { FALLBACKS } from './segment-index.js'
import { entryHolds, readTimeIndex, timeEntries, timeEntryAt } from './time-index.js'

/** Bytes read at a time while walking headers. */
const WINDOW = 16 * 1024

/** Newest timestamps of segments, by path, with the size and modification time they were read at. */
const known = new Map<string, { size: number; mtimeMs: number; max: number }>()
/** Entries kept at most (a process reading many partitions' old segments drops the oldest). */
const KEEP = 10_000

/**
 * The newest timestamp of the records of segment `base` of partition directory `dir` (-Infinity:
 * none), or undefined when it cannot be told (the segment is gone, or a header is damaged or
 * incomplete). Timestamps need not grow with offsets, so this is what a time seek skips a whole
 * segment by (every record of a segment whose newest timestamp is below a time is below it) and
 * what retention by age judges a segment by. Read from the segment's last time-index entry that
 * holds (its `maxBefore`) and the headers after it (at most ~64 KiB of frames), or from every
 * header without a time index; remembered while the segment keeps its size and modification time,
 * so a segment no longer written is read once per process.
 */
export function segmentMaxTimestamp(dir: string, base: number): number | undefined {
  const path = segmentPath(dir, base)
  let fd: number
  try {
    fd = openSync(path, 'r')
  } catch {
    return undefined
  }
  try {
    const st = fstatSync(fd)
    const had = known.get(path)
    if (had !== undefined && had.size === st.size && had.mtimeMs === st.mtimeMs) return had.max
    const max = walk(fd, st.size, timeIndexPath(dir, base))
    if (max !== undefined) {
      if (known.size >= KEEP) known.delete(known.keys().next().value as string)
      known.set(path, { size: st.size, mtimeMs: st.mtimeMs, max })
    }
    return max
  } finally {
    closeSync(fd)
  }
}

/** The newest timestamp of segment `fd` (`size` bytes): from its time index's last entry that holds, then its headers. */
function walk(fd: number, size: number, tix: string): number | undefined {
  let pos = 0
  let max = -Infinity
  const idx = readTimeIndex(tix)
  const head = Buffer.allocUnsafe(HEADER_BYTES)
  const n = timeEntries(idx)
  for (let i = n - 1; i >= 0 && i > n - 1 - FALLBACKS; i--) {
    const e = timeEntryAt(idx, i)
    if (e && entryHolds(fd, e, size, head)) {
      pos = e.position
      max = e.maxBefore
      break
    }
  }
  const buf = Buffer.allocUnsafe(WINDOW)
  let winPos = 0
  let winLen = 0
  while (pos < size) {
    if (pos < winPos || pos + HEADER_BYTES > winPos + winLen) {
      winLen = readSync(fd, buf, 0, WINDOW, pos)
      winPos = pos
      if (winLen < HEADER_BYTES) return undefined
    }
    const h = readFrameHeader(buf, pos - winPos, Number.MAX_SAFE_INTEGER)
    if (typeof h !== 'object' || pos + h.length > size) return undefined
    // A misplaced frame (readers skip it) counted too only makes the bound wider.
    if (!(h.flags & FLAG_SEAL) && h.count > 0 && h.maxTimestamp > max) max = h.maxTimestamp
    pos += h.length
  }
  return max
}
