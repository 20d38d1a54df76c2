import type { ValueKind } from '../core/values.js'

/**
 * A record ready to be appended: key and value already encoded and checked. Backends store these
 * fields as they are and give them back as a `Message`.
 */
export interface RecordInput {
  /** Key bytes as produced by the topic's `KeyCodec`. */
  key: Buffer
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
  let n = r.key.length + r.valueBytes
  if (r.headers) {
    for (const k in r.headers) n += Buffer.byteLength(k) + Buffer.byteLength(r.headers[k] as string)
  }
  return n
}
