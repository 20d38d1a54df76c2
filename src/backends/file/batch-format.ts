import { crc32 } from 'node:zlib'
import type { KeyCodec } from '../../core/keys.js'
import type { Message } from '../../core/types.js'
import {
  type AddedHeaders,
  RECORD_FIXED,
  readRawRecord,
  readRecord,
  recordBytes,
  recordEnd,
  typeBytes,
  writeRecord,
} from '../record-codec.js'
import { fits, valueBound, type MessageFactory, type RawBudget, type RawRecord, type RecordInput } from '../record.js'

export { setHeader } from '../record-codec.js'

/*
 * Batch frame (little-endian), see docs/format.md:
 *   0 u32 magic 'TWB1'   4 u32 frame length (header + records)   8 u32 CRC32 of bytes 12..length
 *  12 u8 version  13 u8 flags (1 = seal: the segment ends, the log continues in the segment named by baseOffset)
 *  14 u16 producerId length   16 f64 base offset   24 u32 record count   28 f64 first timestamp
 *  36 f64 max timestamp       44 u32 header CRC (version 2: CRC32 of bytes 0..7 and 12..43)
 *  48 producerId bytes, then the records (see record-codec.ts; their timestamps are relative to the
 *  first timestamp). Version 1 frames (written before the header CRC) have no field at 44 and are
 *  still read.
 *
 * The header CRC lets a reader trust a frame's length before the whole frame is there: an
 * incomplete frame behind a valid header is a write in progress or a torn write, while a damaged
 * header (a flipped length byte) is corruption, never mistaken for a tear.
 */
export const MAGIC = 0x31425754
export const VERSION = 2
/** Header size of the frames written now (version 2). */
export const HEADER_BYTES = 48
const V1_HEADER_BYTES = 44
export const FLAG_SEAL = 1

/** Parsed frame header. */
export interface FrameHeader {
  length: number
  flags: number
  baseOffset: number
  count: number
  firstTimestamp: number
  maxTimestamp: number
  /** What identifies the frame's bytes (see {@link frameIdAt}). */
  id: number
  producerIdLength: number
  /** Bytes of header before the producer id (44 for version 1, 48 for version 2). */
  headerBytes: number
}

const headerCrc = (buf: Buffer, pos: number) =>
  crc32(buf.subarray(pos + 12, pos + 44), crc32(buf.subarray(pos, pos + 8)))

/**
 * Encode records into one frame with dense offsets from `baseOffset`. The frame is built in
 * `scratch` when the records' bound fits there (the result is then a view of it), else in a new
 * buffer of that bound; either way the result is exactly the frame's bytes. With `added`, each
 * record also carries that header (`writeRecord`).
 */
export function encodeBatch(
  records: readonly RecordInput[],
  baseOffset: number,
  producerId: string,
  flags = 0,
  scratch?: Buffer,
  added?: AddedHeaders,
): Buffer {
  const pid = Buffer.from(producerId, 'utf8')
  const types: Array<Buffer | undefined> = new Array(records.length)
  let size = HEADER_BYTES + pid.length
  if (added !== undefined) for (let i = 0; i < records.length; i++) size += added.bound(i)
  let first = records.length ? (records[0] as RecordInput).timestamp : Date.now()
  let max = first
  for (let i = 0; i < records.length; i++) {
    const r = records[i] as RecordInput
    if (r.timestamp < first) first = r.timestamp
    if (r.timestamp > max) max = r.timestamp
    if (r.type === undefined && r.headers === undefined) {
      size += RECORD_FIXED + r.keyBytes + valueBound(r) // the common record: no per-record calls
      continue
    }
    const t = typeBytes(r)
    if (t) types[i] = t
    size += recordBytes(r, t)
  }
  // Encode into the caller's scratch buffer when it is big enough (the appender writes it at once).
  const buf = scratch && scratch.length >= size ? scratch.subarray(0, size) : Buffer.allocUnsafe(size)
  pid.copy(buf, HEADER_BYTES)
  let pos = HEADER_BYTES + pid.length
  for (let i = 0; i < records.length; i++)
    pos = writeRecord(buf, pos, records[i] as RecordInput, types[i], first, added, i)
  return sealFrame(pos === size ? buf : buf.subarray(0, pos), flags, pid.length, baseOffset, records.length, first, max)
}

/**
 * Write the header of the frame whose producer id (`producerIdLength` bytes at `HEADER_BYTES`)
 * and records are already in `frame` (exactly the frame's bytes), then its CRCs; returns `frame`.
 */
export function sealFrame(
  frame: Buffer,
  flags: number,
  producerIdLength: number,
  baseOffset: number,
  count: number,
  first: number,
  max: number,
): Buffer {
  frame.writeUInt32LE(MAGIC, 0)
  frame.writeUInt32LE(frame.length, 4)
  frame.writeUInt8(VERSION, 12)
  frame.writeUInt8(flags, 13)
  frame.writeUInt16LE(producerIdLength, 14)
  frame.writeDoubleLE(baseOffset, 16)
  frame.writeUInt32LE(count, 24)
  frame.writeDoubleLE(first, 28)
  frame.writeDoubleLE(max, 36)
  frame.writeUInt32LE(headerCrc(frame, 0), 44)
  frame.writeUInt32LE(crc32(frame.subarray(12)), 8)
  return frame
}

/** A seal frame: written at the end of a full segment; the log continues in segment `nextBase`. */
export function encodeSeal(nextBase: number, producerId: string): Buffer {
  return encodeBatch([], nextBase, producerId, FLAG_SEAL)
}

/**
 * Parse the frame header at `pos` of `buf`, whose bytes end at `end`:
 * - `undefined`: no bytes at all at `pos`;
 * - `'short'`: the bytes there are the beginning of a frame that continues past `end` (a write in
 *   progress or a torn write): fewer bytes than a header, consistent with one, or a valid header
 *   whose frame extends past `end`;
 * - `'bad'`: the bytes there cannot begin a frame (wrong magic or version, a header CRC mismatch,
 *   an impossible length): corruption;
 * - else the header of a frame lying wholly in `buf` (its body CRC is checked by {@link frameCrcOk}).
 */
export function readFrameHeader(buf: Buffer, pos: number, end: number): FrameHeader | 'short' | 'bad' | undefined {
  const have = end - pos
  if (have <= 0) return undefined
  if (have < V1_HEADER_BYTES) return partialHeaderOk(buf, pos, have) ? 'short' : 'bad'
  if (buf.readUInt32LE(pos) !== MAGIC) return 'bad'
  const version = buf.readUInt8(pos + 12)
  let headerBytes = V1_HEADER_BYTES
  if (version === 2) {
    if (have < HEADER_BYTES) return 'short'
    if (buf.readUInt32LE(pos + 44) !== headerCrc(buf, pos)) return 'bad'
    headerBytes = HEADER_BYTES
  } else if (version !== 1) return 'bad'
  const length = buf.readUInt32LE(pos + 4)
  const producerIdLength = buf.readUInt16LE(pos + 14)
  if (length < headerBytes + producerIdLength) return 'bad'
  if (pos + length > end) return 'short'
  return {
    length,
    flags: buf.readUInt8(pos + 13),
    producerIdLength,
    baseOffset: buf.readDoubleLE(pos + 16),
    count: buf.readUInt32LE(pos + 24),
    firstTimestamp: buf.readDoubleLE(pos + 28),
    maxTimestamp: buf.readDoubleLE(pos + 36),
    id: frameIdAt(buf, pos),
    headerBytes,
  }
}

/**
 * What identifies the bytes of the frame whose header is at `pos` (version 2: its CRC xor its header
 * CRC; version 1: its CRC). The CRC alone does not change with the header's fields: the header CRC
 * inside the bytes it covers cancels them out, so two frames that differ in their timestamps only
 * have the same CRC (and different header CRCs).
 */
export function frameIdAt(buf: Buffer, pos: number): number {
  const crc = buf.readUInt32LE(pos + 8)
  return buf.readUInt8(pos + 12) === 2 ? (crc ^ buf.readUInt32LE(pos + 44)) >>> 0 : crc
}

/** Whether `have` (< a header) bytes at `pos` can be the start of a frame: magic prefix and version. */
function partialHeaderOk(buf: Buffer, pos: number, have: number): boolean {
  for (let i = 0; i < Math.min(have, 4); i++) if (buf[pos + i] !== ((MAGIC >>> (8 * i)) & 0xff)) return false
  if (have > 12) {
    const v = buf[pos + 12]
    if (v !== 1 && v !== 2) return false
  }
  return true
}

/** Whether the frame at `pos` (of `length` bytes, all in `buf`) has a matching CRC. */
export function frameCrcOk(buf: Buffer, pos: number, length: number): boolean {
  return crc32(buf.subarray(pos + 12, pos + length)) === buf.readUInt32LE(pos + 8)
}

/**
 * Where decoding continues inside a frame: its record number `index` starts at byte `at` of the
 * buffer (-1: not known, start at the first record). The decoders leave it at the record after the
 * last one pushed, so a read that stopped inside a frame continues there without a re-scan.
 */
export interface RecordCursor {
  at: number
  index: number
}

/** Where decoding the frame at `pos` begins: its first record, or where `cursor` stopped (when known). */
function startOf(pos: number, h: FrameHeader, cursor: RecordCursor | undefined): RecordCursor {
  return cursor && cursor.at >= 0 ? cursor : { at: pos + h.headerBytes + h.producerIdLength, index: 0 }
}

/**
 * Decode the records of the frame at `pos` into messages (made by `make` when given), skipping
 * offsets below `fromOffset` and stopping after `limit` messages. Pushes into `out`; returns how
 * many were pushed. With a `cursor` it starts there (when known) and leaves it after the last
 * record pushed.
 */
export function decodeBatch(
  buf: Buffer,
  pos: number,
  h: FrameHeader,
  topic: string,
  partition: number,
  keys: KeyCodec,
  fromOffset: number,
  limit: number,
  out: Message[],
  cursor?: RecordCursor,
  make?: MessageFactory,
): number {
  const producerId = buf.toString('utf8', pos + h.headerBytes, pos + h.headerBytes + h.producerIdLength)
  let { at: p, index: i } = startOf(pos, h, cursor)
  let pushed = 0
  for (; i < h.count && pushed < limit; i++) {
    const next = recordEnd(buf, p)
    const offset = h.baseOffset + i
    if (offset >= fromOffset) {
      out.push(readRecord(buf, p, next, h.firstTimestamp, keys, topic, partition, offset, producerId, make))
      pushed++
    }
    p = next
  }
  if (cursor) {
    cursor.at = p
    cursor.index = i
  }
  return pushed
}

/**
 * Like {@link decodeBatch}, into `RawRecord`s (offsets, types, kinds and value places only); with
 * a `budget`, stops before the record whose value bytes it has no room for (see `fits`). With
 * `slots`, `out[i]` is written into `slots[i]` (made when missing) rather than a new object.
 */
export function rawBatch(
  buf: Buffer,
  pos: number,
  h: FrameHeader,
  fromOffset: number,
  limit: number,
  out: RawRecord[],
  cursor?: RecordCursor,
  budget?: RawBudget,
  slots?: RawRecord[],
): number {
  let { at: p, index: i } = startOf(pos, h, cursor)
  let pushed = 0
  for (; i < h.count && pushed < limit; i++) {
    const next = recordEnd(buf, p)
    if (h.baseOffset + i >= fromOffset) {
      const r = readRawRecord(buf, p, next, h.firstTimestamp, h.baseOffset + i, slots?.[out.length])
      if (slots && slots.length === out.length) slots.push(r)
      if (!fits(budget, r.end - r.start)) break
      out.push(r)
      pushed++
    }
    p = next
  }
  if (cursor) {
    cursor.at = p
    cursor.index = i
  }
  return pushed
}
