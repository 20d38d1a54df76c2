import { crc32 } from 'node:zlib'
import type { KeyCodec } from '../../core/keys.js'
import type { Message } from '../../core/types.js'
import { decodeValue } from '../../core/values.js'
import type { RecordInput } from '../record.js'

/*
 * Batch frame (little-endian), see docs/format.md:
 *   0 u32 magic 'TWB1'   4 u32 frame length (header + records)   8 u32 CRC32 of bytes 12..length
 *  12 u8 version  13 u8 flags (1 = seal: the segment ends, the log continues in the segment named by baseOffset)
 *  14 u16 producerId length   16 f64 base offset   24 u32 record count   28 f64 first timestamp
 *  36 f64 max timestamp       44 producerId bytes, then the records:
 *   u32 record length (after this field) | f64 timestamp - first timestamp | u8 value kind | u8 type length
 *   | u16 key length | u16 header count | key | type | headers (u16 name length, u32 value length, name, value)
 *   | value
 */
export const MAGIC = 0x31425754
export const VERSION = 1
export const HEADER_BYTES = 44
export const FLAG_SEAL = 1
const RECORD_FIXED = 4 + 8 + 1 + 1 + 2 + 2

/** Parsed frame header. */
export interface FrameHeader {
  length: number
  flags: number
  baseOffset: number
  count: number
  firstTimestamp: number
  maxTimestamp: number
  producerIdLength: number
}


// Unchecked little-endian integer access for the per-record hot loops (bounds are known there).
function put16(b: Buffer, at: number, v: number): void {
  b[at] = v & 0xff
  b[at + 1] = v >>> 8
}
function put32(b: Buffer, at: number, v: number): void {
  b[at] = v & 0xff
  b[at + 1] = (v >>> 8) & 0xff
  b[at + 2] = (v >>> 16) & 0xff
  b[at + 3] = v >>> 24
}
function get16(b: Buffer, at: number): number {
  return (b[at] as number) | ((b[at + 1] as number) << 8)
}
function get32(b: Buffer, at: number): number {
  return ((b[at] as number) | ((b[at + 1] as number) << 8) | ((b[at + 2] as number) << 16)) + (b[at + 3] as number) * 0x1000000
}
type NativeSlice = Buffer & { utf8Slice(start: number, end: number): string }
const hasUtf8Slice = typeof (Buffer.prototype as Partial<NativeSlice>).utf8Slice === 'function'
function utf8(b: Buffer, start: number, end: number): string {
  return hasUtf8Slice ? (b as NativeSlice).utf8Slice(start, end) : b.toString('utf8', start, end)
}

/** Set a header; `__proto__` must become an own property, not hit the prototype setter. */
export function setHeader(headers: Record<string, string>, name: string, value: string): void {
  if (name === '__proto__') Object.defineProperty(headers, name, { value, enumerable: true, writable: true, configurable: true })
  else headers[name] = value
}

/** Encode records into one frame with dense offsets from `baseOffset`. */
export function encodeBatch(records: readonly RecordInput[], baseOffset: number, producerId: string, flags = 0): Buffer {
  const pid = Buffer.from(producerId, 'utf8')
  const types: Array<Buffer | undefined> = new Array(records.length)
  let size = HEADER_BYTES + pid.length
  let first = records.length ? (records[0] as RecordInput).timestamp : Date.now()
  let max = first
  for (let i = 0; i < records.length; i++) {
    const r = records[i] as RecordInput
    if (r.timestamp < first) first = r.timestamp
    if (r.timestamp > max) max = r.timestamp
    const t = r.type === undefined ? undefined : Buffer.from(r.type, 'utf8')
    if (t) types[i] = t
    size += RECORD_FIXED + r.keyBytes + (t ? t.length : 0) + r.valueBytes
    if (r.headers) for (const k in r.headers) size += 6 + Buffer.byteLength(k) + Buffer.byteLength(r.headers[k] as string)
  }
  const buf = Buffer.allocUnsafe(size)
  buf.writeUInt32LE(MAGIC, 0)
  buf.writeUInt32LE(size, 4)
  buf.writeUInt8(VERSION, 12)
  buf.writeUInt8(flags, 13)
  buf.writeUInt16LE(pid.length, 14)
  buf.writeDoubleLE(baseOffset, 16)
  buf.writeUInt32LE(records.length, 24)
  buf.writeDoubleLE(first, 28)
  buf.writeDoubleLE(max, 36)
  pid.copy(buf, HEADER_BYTES)
  let pos = HEADER_BYTES + pid.length
  for (let i = 0; i < records.length; i++) {
    const r = records[i] as RecordInput
    const t = types[i]
    const start = pos
    buf.writeDoubleLE(r.timestamp - first, pos + 4)
    buf[pos + 12] = r.kind
    buf[pos + 13] = t ? t.length : 0
    const key = r.key
    const keyBytes = r.keyBytes
    put16(buf, pos + 14, keyBytes)
    let hc = 0
    if (r.headers) for (const _ in r.headers) hc++
    put16(buf, pos + 16, hc)
    pos += 18
    if (typeof key === 'number') {
      // An integer key, big-endian.
      for (let j = keyBytes - 1, k = key; j >= 0; j--, k = Math.floor(k / 256)) buf[pos + j] = k & 0xff
      pos += keyBytes
    } else if (keyBytes <= 16) {
      // Keys are short: a byte loop beats Buffer#copy's call overhead.
      for (let j = 0; j < keyBytes; j++) buf[pos++] = key[j] as number
    } else pos += key.copy(buf, pos)
    if (t) pos += t.copy(buf, pos)
    if (r.headers) {
      for (const k in r.headers) {
        const v = r.headers[k] as string
        // The 3-argument `write` is V8's fast path (measured faster than `utf8Write` or the 4-argument form).
        const kl = buf.write(k, pos + 6, 'utf8')
        const vl = buf.write(v, pos + 6 + kl, 'utf8')
        put16(buf, pos, kl)
        put32(buf, pos + 2, vl)
        pos += 6 + kl + vl
      }
    }
    pos += typeof r.value === 'string' ? buf.write(r.value, pos, 'utf8') : r.value.copy(buf, pos)
    put32(buf, start, pos - start - 4)
  }
  buf.writeUInt32LE(crc32(buf.subarray(12)), 8)
  return buf
}

/** A seal frame: written at the end of a full segment; the log continues in segment `nextBase`. */
export function encodeSeal(nextBase: number, producerId: string): Buffer {
  return encodeBatch([], nextBase, producerId, FLAG_SEAL)
}

/**
 * Parse the frame header at `pos`. Returns `undefined` when the bytes there are not (yet) a whole,
 * valid frame: fewer than a header, a bad magic, or (with `checkCrc`) a CRC mismatch. `'short'` when
 * the header is valid but the frame extends past `end` (a write in progress or a torn tail).
 */
export function readFrameHeader(buf: Buffer, pos: number, end: number): FrameHeader | 'short' | undefined {
  if (end - pos < HEADER_BYTES) return end - pos === 0 ? undefined : 'short'
  if (buf.readUInt32LE(pos) !== MAGIC || buf.readUInt8(pos + 12) !== VERSION) return undefined
  const length = buf.readUInt32LE(pos + 4)
  if (length < HEADER_BYTES) return undefined
  if (pos + length > end) return 'short'
  return {
    length,
    flags: buf.readUInt8(pos + 13),
    producerIdLength: buf.readUInt16LE(pos + 14),
    baseOffset: buf.readDoubleLE(pos + 16),
    count: buf.readUInt32LE(pos + 24),
    firstTimestamp: buf.readDoubleLE(pos + 28),
    maxTimestamp: buf.readDoubleLE(pos + 36),
  }
}

/** Whether the frame at `pos` (of `length` bytes, all in `buf`) has a matching CRC. */
export function frameCrcOk(buf: Buffer, pos: number, length: number): boolean {
  return crc32(buf.subarray(pos + 12, pos + length)) === buf.readUInt32LE(pos + 8)
}

/**
 * Decode the records of the frame at `pos` into messages, skipping offsets below `fromOffset`
 * and stopping after `limit` messages. Pushes into `out`; returns how many were pushed.
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
): number {
  const producerId = buf.toString('utf8', pos + HEADER_BYTES, pos + HEADER_BYTES + h.producerIdLength)
  let p = pos + HEADER_BYTES + h.producerIdLength
  let pushed = 0
  for (let i = 0; i < h.count && pushed < limit; i++) {
    const next = p + 4 + get32(buf, p)
    const offset = h.baseOffset + i
    if (offset >= fromOffset) {
      const timestamp = h.firstTimestamp + buf.readDoubleLE(p + 4)
      const kind = buf[p + 12] as number
      const typeLen = buf[p + 13] as number
      const keyLen = get16(buf, p + 14)
      const headerCount = get16(buf, p + 16)
      let q = p + 18
      const key = keys.decode(buf, q, q + keyLen)
      q += keyLen
      const type = typeLen ? utf8(buf, q, q + typeLen) : undefined
      q += typeLen
      const headers: Record<string, string> = {}
      for (let j = 0; j < headerCount; j++) {
        const kl = get16(buf, q)
        const vl = get32(buf, q + 2)
        setHeader(headers, utf8(buf, q + 6, q + 6 + kl), utf8(buf, q + 6 + kl, q + 6 + kl + vl))
        q += 6 + kl + vl
      }
      const value = kind === 0 ? utf8(buf, q, next) : decodeValue(kind, buf, q, next)
      const m: Message = { topic, partition, offset, key, timestamp, value, headers, producerId }
      if (type !== undefined) m.type = type
      out.push(m)
      pushed++
    }
    p = next
  }
  return pushed
}
