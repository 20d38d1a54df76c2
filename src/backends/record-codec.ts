import type { KeyCodec } from '../core/keys.js'
import type { Message } from '../core/types.js'
import { ValueKind, decodeValue } from '../core/values.js'
import { headerBound, valueBound, type MessageFactory, type RawRecord, type RecordInput } from './record.js'

/*
 * One stored record (shared by the file backend's batch frames and the Redis backend's stream
 * entries; little-endian, see docs/format.md):
 *   u32 record length (after this field) | f64 timestamp - base timestamp | u8 value kind
 *   | u8 type length | u16 key length | u16 header count | key | type | headers
 *   (u16 name length, u32 value length, name, value) | value
 * The file backend's base timestamp is the frame's first timestamp; Redis entries use base 0, so
 * the f64 is the absolute timestamp (exact, also for fractional milliseconds).
 */
export const RECORD_FIXED = 4 + 8 + 1 + 1 + 2 + 2

// Unchecked little-endian integer access for the per-record hot loops (bounds are known there).
export function put16(b: Buffer, at: number, v: number): void {
  b[at] = v & 0xff
  b[at + 1] = v >>> 8
}
export function put32(b: Buffer, at: number, v: number): void {
  b[at] = v & 0xff
  b[at + 1] = (v >>> 8) & 0xff
  b[at + 2] = (v >>> 16) & 0xff
  b[at + 3] = v >>> 24
}
let viewOf: Buffer | undefined
let view: DataView | undefined
/**
 * A little-endian float64 at `at`, through a DataView kept for the last buffer read (one per
 * reader window, so one is made per window, not per record): the optimizer turns `getFloat64` into
 * one load, where `readDoubleLE` in a decode loop ran as a call copying byte by byte (7.6% of a
 * history read in a profile; history 0.60× → 0.68× the plain log, `npm run bench -- file`). A
 * small buffer (a Redis entry holds one record) is read directly: a view per record costs more.
 */
export function getF64(b: Buffer, at: number): number {
  if (b !== viewOf) {
    if (b.length < 4096) return b.readDoubleLE(at)
    viewOf = b
    view = new DataView(b.buffer, b.byteOffset, b.byteLength)
  }
  return (view as DataView).getFloat64(at, true)
}
export function get16(b: Buffer, at: number): number {
  return (b[at] as number) | ((b[at + 1] as number) << 8)
}
export function get32(b: Buffer, at: number): number {
  return (
    ((b[at] as number) | ((b[at + 1] as number) << 8) | ((b[at + 2] as number) << 16)) +
    (b[at + 3] as number) * 0x1000000
  )
}
type NativeSlice = Buffer & { utf8Slice(start: number, end: number): string }
const hasUtf8Slice = typeof (Buffer.prototype as Partial<NativeSlice>).utf8Slice === 'function'
export function utf8(b: Buffer, start: number, end: number): string {
  return hasUtf8Slice ? (b as NativeSlice).utf8Slice(start, end) : b.toString('utf8', start, end)
}
type NativeWrite = Buffer & { utf8Write(s: string, at: number): number }
const hasUtf8Write = typeof (Buffer.prototype as Partial<NativeWrite>).utf8Write === 'function'
/**
 * Write a string as UTF-8 at `at` (room must be there); returns the bytes written. Buffer's own
 * binding skips `write()`'s argument handling: 10-25 ns less per string of 5 to 100 characters,
 * measured on Node 20.
 */
function writeUtf8(b: Buffer, s: string, at: number): number {
  return hasUtf8Write ? (b as NativeWrite).utf8Write(s, at) : b.write(s, at, 'utf8')
}

/** `writeUtf8` for a short string: a byte loop while it is ASCII (most ids are), else the native write. */
function writeShortUtf8(b: Buffer, s: string, at: number): number {
  const n = s.length
  if (n > 32) return writeUtf8(b, s, at)
  for (let j = 0; j < n; j++) {
    const c = s.charCodeAt(j)
    if (c >= 0x80) return writeUtf8(b, s, at)
    b[at + j] = c
  }
  return n
}

/** Set a header; `__proto__` must become an own property, not hit the prototype setter. */
export function setHeader(headers: Record<string, string>, name: string, value: string): void {
  if (name === '__proto__')
    Object.defineProperty(headers, name, { value, enumerable: true, writable: true, configurable: true })
  else headers[name] = value
}

/** The UTF-8 bytes of a record's type name, if it has one. */
export function typeBytes(r: RecordInput): Buffer | undefined {
  return r.type === undefined ? undefined : Buffer.from(r.type, 'utf8')
}

/**
 * Most bytes a record can encode to, length prefix included (exact for a record whose value is
 * measured and that has no headers; a header counts 3 bytes per UTF-16 unit, as an unmeasured value).
 */
export function recordBytes(r: RecordInput, type: Buffer | undefined): number {
  let size = RECORD_FIXED + r.keyBytes + (type ? type.length : 0) + valueBound(r)
  if (r.headers) size += headerBound(r.headers, 6)
  return size
}

/**
 * A header each record of a call carries, with its value for each, written as the records are
 * encoded (`writeRecord`'s `added`): not in the records themselves (a processor's `x-twain-source`,
 * `SourceHeaders`, whose values are written as bytes, never made into strings).
 */
export interface AddedHeaders {
  /** The header's name. */
  readonly name: string
  /** Most bytes the header adds to record `i` (its name and value, with their lengths). */
  bound(i: number): number
  /** Write the value of record `i`'s header at `pos`; returns the position after it. */
  writeValue(buf: Buffer, pos: number, i: number): number
}

/**
 * Write a record at `pos` (room for `recordBytes` must be there); returns the position after it
 * (exact). With `added`, the record carries that header too (record `addedIndex`'s value), last,
 * in place of any of its own by that name (room for `added.bound(addedIndex)` more): a store's
 * header (`x-twain-source`) without a copy of the record made to hold it.
 */
export function writeRecord(
  buf: Buffer,
  pos: number,
  r: RecordInput,
  type: Buffer | undefined,
  tsBase: number,
  added?: AddedHeaders,
  addedIndex = 0,
): number {
  const start = pos
  buf.writeDoubleLE(r.timestamp - tsBase, pos + 4)
  buf[pos + 12] = r.kind
  buf[pos + 13] = type ? type.length : 0
  const keyBytes = r.keyBytes
  put16(buf, pos + 14, keyBytes)
  const addedName = added?.name
  let hc = added === undefined ? 0 : 1
  if (r.headers) for (const k in r.headers) if (k !== addedName) hc++
  put16(buf, pos + 16, hc)
  pos = writeKey(buf, pos + 18, r.key, keyBytes)
  if (type) pos += type.copy(buf, pos)
  if (r.headers) {
    for (const k in r.headers) {
      if (k === addedName) continue
      pos = writeHeader(buf, pos, k, r.headers[k] as string)
    }
  }
  if (added !== undefined) {
    const kl = writeShortUtf8(buf, added.name, pos + 6)
    const end = added.writeValue(buf, pos + 6 + kl, addedIndex)
    put16(buf, pos, kl)
    put32(buf, pos + 2, end - pos - 6 - kl)
    pos = end
  }
  pos += typeof r.value === 'string' ? writeUtf8(buf, r.value, pos) : r.value.copy(buf, pos)
  put32(buf, start, pos - start - 4)
  return pos
}

/** Write one header at `pos`; returns the position after it. */
function writeHeader(buf: Buffer, pos: number, name: string, value: string): number {
  const kl = writeShortUtf8(buf, name, pos + 6)
  const vl = writeShortUtf8(buf, value, pos + 6 + kl)
  put16(buf, pos, kl)
  put32(buf, pos + 2, vl)
  return pos + 6 + kl + vl
}

/**
 * Write a text record with no type and no headers at `pos`, its timestamp the base's (delta 0):
 * the same bytes `writeRecord` writes for it (room for `RECORD_FIXED + keyBytes + 3 × value.length`
 * must be there); returns the position after it. With `header` (the UTF-8 bytes of one header's
 * name, e.g. the idempotency id's) and `headerValue`, the record carries that one header (room for
 * `6 + header.length + 3 × headerValue.length` more).
 */
export function writeTextRecord(
  buf: Buffer,
  pos: number,
  key: Buffer | number,
  keyBytes: number,
  value: string,
  header?: Buffer,
  headerValue?: string,
): number {
  const start = pos
  for (let i = 4; i < 12; i++) buf[pos + i] = 0 // f64 +0: the timestamp delta
  buf[pos + 12] = ValueKind.Text
  buf[pos + 13] = 0
  put16(buf, pos + 14, keyBytes)
  put16(buf, pos + 16, header === undefined ? 0 : 1)
  pos = writeKey(buf, pos + 18, key, keyBytes)
  if (header !== undefined) {
    // A header of a few bytes (the idempotency id): byte loops beat the native calls' overhead.
    const kl = header.length
    for (let j = 0; j < kl; j++) buf[pos + 6 + j] = header[j] as number
    const vl = writeShortUtf8(buf, headerValue as string, pos + 6 + kl)
    put16(buf, pos, kl)
    put32(buf, pos + 2, vl)
    pos += 6 + kl + vl
  }
  pos += writeUtf8(buf, value, pos)
  put32(buf, start, pos - start - 4)
  return pos
}

/** Write a record's key (see `RecordInput.key`) at `pos`; returns the position after it. */
function writeKey(buf: Buffer, pos: number, key: Buffer | number, keyBytes: number): number {
  if (typeof key === 'number') {
    // An integer key, big-endian (u8/u16/u32 unrolled).
    if (keyBytes === 4) {
      buf[pos] = key >>> 24
      buf[pos + 1] = (key >>> 16) & 0xff
      buf[pos + 2] = (key >>> 8) & 0xff
      buf[pos + 3] = key & 0xff
    } else if (keyBytes === 2) {
      buf[pos] = key >>> 8
      buf[pos + 1] = key & 0xff
    } else if (keyBytes === 1) buf[pos] = key
    else for (let j = keyBytes - 1, k = key; j >= 0; j--, k = Math.floor(k / 256)) buf[pos + j] = k & 0xff
    return pos + keyBytes
  }
  // Keys are short: a byte loop beats Buffer#copy's call overhead.
  if (keyBytes <= 16) {
    for (let j = 0; j < keyBytes; j++) buf[pos + j] = key[j] as number
    return pos + keyBytes
  }
  return pos + key.copy(buf, pos)
}

/** One record encoded on its own (timestamp absolute). */
export function encodeRecord(r: RecordInput): Buffer {
  const type = typeBytes(r)
  const buf = Buffer.allocUnsafe(recordBytes(r, type))
  const end = writeRecord(buf, 0, r, type, 0)
  return end === buf.length ? buf : buf.subarray(0, end)
}

/** Position just after the record at `p`. */
export function recordEnd(buf: Buffer, p: number): number {
  return p + 4 + get32(buf, p)
}

/** Decode `count` headers at `q` into `headers`; returns the position after them. */
function readHeaders(buf: Buffer, q: number, count: number, headers: Record<string, string>): number {
  for (let j = 0; j < count; j++) {
    const kl = get16(buf, q)
    const vl = get32(buf, q + 2)
    setHeader(headers, utf8(buf, q + 6, q + 6 + kl), utf8(buf, q + 6 + kl, q + 6 + kl + vl))
    q += 6 + kl + vl
  }
  return q
}

/** Decode the record at `p` (ending at `next`, see `recordEnd`) into a message (made by `make` when given). */
export function readRecord(
  buf: Buffer,
  p: number,
  next: number,
  tsBase: number,
  keys: KeyCodec,
  topic: string,
  partition: number,
  offset: number,
  producerId: string,
  make?: MessageFactory,
): Message {
  const timestamp = tsBase + getF64(buf, p + 4)
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
  q = readHeaders(buf, q, headerCount, headers)
  const value = kind === 0 ? utf8(buf, q, next) : decodeValue(kind, buf, q, next)
  if (make !== undefined)
    return make.message(topic, partition, offset, key, timestamp, value, headers, producerId, type)
  const m: Message = { topic, partition, offset, key, timestamp, value, headers, producerId }
  if (type !== undefined) m.type = type
  return m
}

/**
 * The record at `p` (ending at `next`) without decoding its key or value (see `RawRecord`), into
 * `into` when given (a reader reusing its records from call to call: no garbage per record).
 */
export function readRawRecord(
  buf: Buffer,
  p: number,
  next: number,
  tsBase: number,
  offset: number,
  into?: RawRecord,
): RawRecord {
  const typeLen = buf[p + 13] as number
  const headerCount = get16(buf, p + 16)
  let q = p + 18 + get16(buf, p + 14)
  const type = typeLen ? utf8(buf, q, q + typeLen) : undefined
  q += typeLen
  let headers: Record<string, string> | undefined
  if (headerCount > 0) q = readHeaders(buf, q, headerCount, (headers = {}))
  const timestamp = tsBase + getF64(buf, p + 4)
  const kind = buf[p + 12] as number
  if (into === undefined) return { offset, timestamp, type, headers, kind, buf, start: q, end: next }
  into.offset = offset
  into.timestamp = timestamp
  into.type = type
  into.headers = headers
  into.kind = kind
  into.buf = buf
  into.start = q
  into.end = next
  return into
}
