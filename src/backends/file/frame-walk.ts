import { closeSync, fstatSync, openSync, readSync } from 'node:fs'
import { FLAG_SEAL, HEADER_BYTES, readFrameHeader } from './batch-format.js'
import { indexPath, segmentPath, timeIndexPath } from './layout.js'
import { indexLookup } from './segment-index.js'
import { segmentFor } from './segment-list.js'
import { timeLookup } from './time-index.js'

/** Where a frame is: its segment's base, its byte position there and its length. */
export interface FramePlace {
  base: number
  position: number
  length: number
}

/** Bytes read at a time while walking headers: several small frames' headers, or one big frame's. */
const WINDOW = 16 * 1024

/**
 * Where a time seek decodes: `offset`, the first offset ≥ `from` of the first records frame (in log
 * order, misplaced frames skipped as readers skip them) holding offsets ≥ `from` whose header's
 * `maxTimestamp` is ≥ `time`, and `end`, that frame's end offset; with `end`, `at` says where the
 * frame is (segment base, byte position, length). Frames before it cannot hold a
 * record at or after `time`, whatever the order of timestamps, so they are passed over by their
 * headers alone (the header CRC is checked, the body's is not: their records are not read).
 * Without `end` the walk stopped unsure (the end of the data, a damaged or incomplete header, a
 * segment missing): the caller reads forward from `offset` as a reader does, which also reports damage.
 * In each segment the walk starts at the time index's entry for `time` (time-index.ts: every
 * frame before it is below `time`) when that is past the sparse index's entry for `from`, so it
 * reads the headers of at most ~64 KiB of frames; without a time index, from the sparse index's.
 */
export function frameForTime(
  dir: string,
  bases: readonly number[],
  from: number,
  time: number,
): { offset: number; end?: number; at?: FramePlace } {
  const buf = Buffer.allocUnsafe(WINDOW)
  for (let si = segmentFor(bases, from); si < bases.length; si++) {
    const base = bases[si] as number
    let fd: number
    try {
      fd = openSync(segmentPath(dir, base), 'r')
    } catch {
      return { offset: from }
    }
    try {
      const size = fstatSync(fd).size
      let pos: number
      const t = timeLookup(timeIndexPath(dir, base), time, fd, size)
      if (t && t.offset >= from) {
        pos = t.position
        from = t.offset
      } else {
        pos = indexLookup(indexPath(dir, base), from, fd, size)
        if (t && t.position > pos) pos = t.position
      }
      let prevEnd = -1
      let winPos = 0
      let winLen = 0
      let sealed = false
      while (!sealed) {
        if (pos < winPos || pos + HEADER_BYTES > winPos + winLen) {
          winLen = readSync(fd, buf, 0, WINDOW, pos)
          winPos = pos
          if (winLen < HEADER_BYTES) return { offset: from }
        }
        // The header alone is in `buf`: pretend the frame fits, then check it does in the file.
        const h = readFrameHeader(buf, pos - winPos, Number.MAX_SAFE_INTEGER)
        if (typeof h !== 'object' || pos + h.length > size) return { offset: from }
        if (h.flags & FLAG_SEAL) {
          if (bases[si + 1] !== h.baseOffset) return { offset: from }
          from = Math.max(from, h.baseOffset)
          sealed = true
        } else if (h.baseOffset >= prevEnd) {
          const end = h.baseOffset + h.count
          if (end > from && h.count > 0 && h.maxTimestamp >= time)
            return { offset: Math.max(from, h.baseOffset), end, at: { base, position: pos, length: h.length } }
          prevEnd = end
          from = Math.max(from, end)
        }
        pos += h.length
      }
    } finally {
      closeSync(fd)
    }
  }
  return { offset: from }
}
