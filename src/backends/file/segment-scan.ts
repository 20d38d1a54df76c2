import { readSync } from 'node:fs'
import { TopicCorruptError } from '../../core/errors.js'
import { FLAG_SEAL, HEADER_BYTES, frameCrcOk, readFrameHeader } from './batch-format.js'

/** What scanning the frames of a segment from a known-good position found. */
export interface ScanResult {
  /** End of the last whole, valid frame. */
  end: number
  /** Offset after the last record seen. */
  nextOffset: number
  /** Start of the last whole frame seen (or the scan start if none). */
  lastFrameStart: number
  /** Starts of frames seen, for index maintenance. */
  frames: Array<{ position: number; baseOffset: number }>
  /** Set when a seal frame was found: the log continues in the segment with this base. */
  sealedTo?: number
  /** Bytes after `end` that are not a whole valid frame (a torn tail, or a write in progress). */
  tornBytes: number
}

const CHUNK = 1 << 20

/**
 * Synchronously scan frames of an open segment from `from` (a frame boundary) to `size`, checking
 * each frame's CRC. A bad frame with valid data after it is corruption (`TopicCorruptError`); a bad
 * or incomplete frame at the very end is a torn tail, reported in `tornBytes`.
 */
export function scanSegmentSync(fd: number, path: string, from: number, size: number, nextOffset: number): ScanResult {
  const res: ScanResult = { end: from, nextOffset, lastFrameStart: from, frames: [], tornBytes: 0 }
  let buf = Buffer.allocUnsafe(Math.min(CHUNK, Math.max(size - from, 64)))
  let bufStart = from
  let bufLen = 0
  let pos = from
  while (pos < size) {
    // Refill when the frame at pos is not wholly in the buffer.
    if (pos + HEADER_BYTES > bufStart + bufLen || pos + buf.readUInt32LE(pos - bufStart + 4) > bufStart + bufLen) {
      const want = Math.min(Math.max(CHUNK, frameLengthAt(fd, pos, size)), size - pos)
      if (buf.length < want) buf = Buffer.allocUnsafe(want)
      bufStart = pos
      bufLen = readSync(fd, buf, 0, want, pos)
    }
    const rel = pos - bufStart
    const h = readFrameHeader(buf, rel, bufLen)
    if (h === undefined || h === 'short' || !frameCrcOk(buf, rel, h.length)) {
      const frameEnd = h && h !== 'short' ? pos + h.length : size
      if (frameEnd < size && h !== 'short') {
        throw new TopicCorruptError(`Segment ${path} is corrupt at byte ${pos}: a frame fails its CRC check and more data follows it`)
      }
      res.tornBytes = size - pos
      return res
    }
    res.frames.push({ position: pos, baseOffset: h.baseOffset })
    res.lastFrameStart = pos
    pos += h.length
    res.end = pos
    if (h.flags & FLAG_SEAL) {
      res.sealedTo = h.baseOffset
      return res
    }
    res.nextOffset = h.baseOffset + h.count
  }
  return res
}

function frameLengthAt(fd: number, pos: number, size: number): number {
  if (size - pos < 8) return 0
  const b = Buffer.allocUnsafe(8)
  readSync(fd, b, 0, 8, pos)
  return Math.min(b.readUInt32LE(4), size - pos)
}
