import { readSync } from 'node:fs'
import { ValueKind } from '../../core/values.js'
import { get16, get32, getF64, recordEnd } from '../record-codec.js'
import { ID_HEADER } from '../record.js'
import { SOURCE_HEADER } from '../source-header.js'
import { readFull } from './safe-fs.js'
import { FLAG_SEAL, frameCrcOk, readFrameHeader, type FrameHeader } from './batch-format.js'

/*
 * A sealed segment's frames and records as a compaction pass reads them: every frame whole and
 * checked (header and body CRC), its records with what compaction decides on (the key as stored,
 * whether the value is a tombstone, the idempotency and source headers).
 */

const CHUNK = 1 << 20

/** A whole, valid frame of a segment: its header, where it is in the file and in `buf`. */
export interface SegmentFrame {
  h: FrameHeader
  /** Byte position in the segment. */
  position: number
  buf: Buffer
  /** Where the frame starts in `buf` (valid only during the visit). */
  rel: number
}

/** How a walk ended: at the seal, at the end of the bytes (a torn write counts), or at damage. */
export interface WalkEnd {
  sealed: boolean
  /** Byte position where the walk stopped (after the seal, at the end, or at the damage). */
  position: number
  damage?: string
}

/** Visit the whole, valid frames of segment `fd` (`size` bytes) from byte 0, seal included, until the seal, the end or damage. */
export function walkFrames(fd: number, size: number, visit: (f: SegmentFrame) => void): WalkEnd {
  let buf = Buffer.allocUnsafe(Math.min(CHUNK, Math.max(size, 64)))
  let winPos = 0
  let winLen = 0
  let pos = 0
  while (pos < size) {
    let h = readFrameHeader(buf, pos - winPos, winLen)
    if (typeof h !== 'object' && h !== 'bad') {
      // Not wholly in the window: read from here, at least as much as the frame's header claims.
      const want = Math.min(size - pos, Math.max(CHUNK, lengthAt(fd, pos)))
      if (buf.length < want) buf = Buffer.allocUnsafe(want)
      winPos = pos
      winLen = readFull(fd, buf, want, pos)
      h = readFrameHeader(buf, 0, winLen)
    }
    if (h === undefined || h === 'short') return { sealed: false, position: pos }
    if (h === 'bad') return { sealed: false, position: pos, damage: `not a valid frame header at byte ${pos}` }
    const rel = pos - winPos
    if (!frameCrcOk(buf, rel, h.length))
      return { sealed: false, position: pos, damage: `a frame fails its CRC check at byte ${pos}` }
    visit({ h, position: pos, buf, rel })
    pos += h.length
    if (h.flags & FLAG_SEAL) return { sealed: true, position: pos }
  }
  return { sealed: false, position: pos }
}

/** The frame length a header at `pos` claims (0 when unreadable). */
function lengthAt(fd: number, pos: number): number {
  const b = Buffer.alloc(8)
  return readSync(fd, b, 0, 8, pos) === 8 ? b.readUInt32LE(4) : 0
}

/** One record of a frame, as compaction sees it. */
export interface StoredRecord {
  offset: number
  /** The key's stored bytes, one char per byte (a map key). */
  key: string
  timestamp: number
  /** A `null` value (stored as JSON `null`). */
  tombstone: boolean
  /** Carries an idempotency id (`ID_HEADER`). */
  id: boolean
  /** Carries a processor output's source (`SOURCE_HEADER`). */
  sourced: boolean
  /** Its bytes in the frame's buffer. */
  start: number
  end: number
}

const NULL = Buffer.from('null')

/** Visit the records of the frame `f` (a records frame) in offset order. */
export function forEachRecord(f: SegmentFrame, visit: (r: StoredRecord) => void): void {
  const { buf, h } = f
  let p = f.rel + h.headerBytes + h.producerIdLength
  for (let i = 0; i < h.count; i++) {
    const next = recordEnd(buf, p)
    const keyLen = get16(buf, p + 14)
    const headerCount = get16(buf, p + 16)
    let q = p + 18 + keyLen + (buf[p + 13] as number)
    let id = false
    let sourced = false
    for (let j = 0; j < headerCount; j++) {
      const kl = get16(buf, q)
      const vl = get32(buf, q + 2)
      const name = buf.toString('utf8', q + 6, q + 6 + kl)
      if (name === ID_HEADER) id = true
      else if (name === SOURCE_HEADER) sourced = true
      q += 6 + kl + vl
    }
    visit({
      offset: h.baseOffset + i,
      key: buf.toString('latin1', p + 18, p + 18 + keyLen),
      timestamp: h.firstTimestamp + getF64(buf, p + 4),
      tombstone: buf[p + 12] === ValueKind.Json && next - q === 4 && buf.compare(NULL, 0, 4, q, next) === 0,
      id,
      sourced,
      start: p,
      end: next,
    })
    p = next
  }
}
