import { readSync } from 'node:fs'
import { TopicCorruptError } from '../../core/errors.js'
import { FLAG_SEAL, HEADER_BYTES, frameCrcOk, readFrameHeader } from './batch-format.js'
import { readFull } from './safe-fs.js'

/** Where a scan found bytes that are neither whole valid frames nor a clean torn write. */
export interface SegmentDamage {
  /** Byte position of the first bad byte (the start of the frame that fails its checks). */
  position: number
  /** The offset the bad frame should have started with (the next offset after the good ones). */
  offset: number
  /** What is wrong, for messages. */
  reason: string
}

/** What scanning the frames of a segment from a known-good position found. */
export interface ScanResult {
  /** End of the last whole, valid frame. */
  end: number
  /** Offset after the last record seen. */
  nextOffset: number
  /** Start of the last whole frame seen (or the scan start if none). */
  lastFrameStart: number
  /** Set when a seal frame was found: the log continues in the segment with this base. */
  sealedTo?: number
  /**
   * Bytes after `end` that are the beginning of a frame not wholly written: a write in progress,
   * or a torn write of a writer that died. Never more than one frame's worth.
   */
  tornBytes: number
  /** Set when the bytes at `end` are damaged (anything but a clean torn write). */
  damage?: SegmentDamage
  /** The largest `maxTimestamp` of the records frames seen, misplaced ones included (-Infinity: none). */
  maxTimestamp: number
}

const CHUNK = 1 << 20

/**
 * Synchronously scan frames of an open segment from `from` (a frame boundary) to `size`, checking
 * each frame's header and CRC. The scan stops at the first frame that is not whole and valid:
 * - the bytes there are the start of a frame that continues past `size` (a valid header whose frame
 *   is incomplete, or a consistent partial header): a torn write or a write in progress, reported
 *   in `tornBytes`;
 * - anything else (bad magic or header CRC, a whole frame failing its CRC, even at the very end):
 *   damage, reported in `damage`. Nothing after damage is trusted or counted.
 */
export function scanSegmentSync(fd: number, from: number, size: number, nextOffset: number): ScanResult {
  const res: ScanResult = { end: from, nextOffset, lastFrameStart: from, tornBytes: 0, maxTimestamp: -Infinity }
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
      bufLen = readFull(fd, buf, want, pos)
    }
    const rel = pos - bufStart
    const h = readFrameHeader(buf, rel, bufLen)
    if (h === undefined) break // the file shrank under us: nothing more to see
    if (h === 'short') {
      res.tornBytes = size - pos
      return res
    }
    if (h === 'bad' || !frameCrcOk(buf, rel, h.length)) {
      res.damage = {
        position: pos,
        offset: res.nextOffset,
        reason: h === 'bad' ? 'not a valid frame header' : 'a frame fails its CRC check',
      }
      return res
    }
    res.lastFrameStart = pos
    pos += h.length
    res.end = pos
    if (h.flags & FLAG_SEAL) {
      res.sealedTo = h.baseOffset
      return res
    }
    // A frame behind the offsets already seen was misplaced by a writer whose lock was broken
    // (it detected that and failed its send): skip it.
    if (h.baseOffset >= res.nextOffset) res.nextOffset = h.baseOffset + h.count
    if (h.count > 0 && h.maxTimestamp > res.maxTimestamp) res.maxTimestamp = h.maxTimestamp
  }
  return res
}

/** The `TopicCorruptError` for damage found in segment `path`. */
export function damageError(path: string, d: SegmentDamage): TopicCorruptError {
  return new TopicCorruptError(
    `Segment ${path} is corrupt at byte ${d.position} (offset ${d.offset}): ${d.reason}; run \`twainmq check\` and \`twainmq repair\``,
    {
      file: path,
      position: d.position,
      offset: d.offset,
    },
  )
}

function frameLengthAt(fd: number, pos: number, size: number): number {
  if (size - pos < 8) return 0
  const b = Buffer.allocUnsafe(8)
  readSync(fd, b, 0, 8, pos)
  return Math.min(b.readUInt32LE(4), size - pos)
}
