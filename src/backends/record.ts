import type { ValueKind } from '../core/values.js'

/**
 * A record ready to be appended: key and value already encoded and checked. Backends store these
 * fields as they are and give them back as a `Message`.
 */
export interface RecordInput {
  /**
   * The key as the topic's `KeyCodec.recordKey` gives it: bytes, or (for `u8/u16/u32` keys) the
   * number itself, stored big-endian in `keyBytes` bytes — no buffer per record.
   */
  key: Buffer | number
  /** Stored length of the key in bytes. */
  keyBytes: number
  /** Milliseconds since the epoch (may be fractional). */
  timestamp: number
  /** How `value` is encoded. */
  kind: ValueKind
  /** Encoded value: bytes, or a string stored as UTF-8 (written straight into the batch, no copy). */
  value: Buffer | string
  /** Byte length of `value` (UTF-8 length for strings). */
  valueBytes: number
  /** Registered message type name, for `ValueKind.Typed`. */
  type?: string | undefined
  headers?: Record<string, string> | undefined
}

/** Bytes a record counts against `maxMessageBytes`: key + header names and values + encoded value. */
export function recordSize(r: RecordInput): number {
  let n = r.keyBytes + r.valueBytes
  if (r.headers) {
    for (const k in r.headers) n += Buffer.byteLength(k) + Buffer.byteLength(r.headers[k] as string)
  }
  return n
}

/** The key bytes of a record (allocates for numeric keys; for slow paths such as Redis encoding). */
export function recordKeyBytes(r: RecordInput): Buffer {
  if (typeof r.key !== 'number') return r.key
  const b = Buffer.allocUnsafe(r.keyBytes)
  b.writeUIntBE(r.key, 0, r.keyBytes)
  return b
}
