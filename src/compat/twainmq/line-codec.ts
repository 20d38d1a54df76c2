import { deflateRawSync, inflateRawSync } from 'node:zlib'
import { InvalidArgumentError, UnknownMessageTypeError } from '../../core/errors.js'
import type { Key, KeyType } from '../../core/types.js'
import { b85DecodeInto, b85DecodedLength, b85EncodeInto, b85Length } from './base85.js'
import { ensureAscii, parseJson } from './json64.js'
import { decodeKeyField, keyTypeOfWidth } from './line-keys.js'
import { decodeSecondsField, secondsToMs } from './line-time.js'

export { decodeKeyField, keyBytes, keyTypeOfWidth, keyWidthOf, recordKeyBytes } from './line-keys.js'
export { decodeSecondsField, microsOf, msToSeconds, secondsToMs } from './line-time.js'

/*
 * One TwainMQ 0.1.9 message line: KEY | TS | PAYLOAD | "\n", the fields concatenated without separators.
 *   KEY      base85 of the key: big-endian unsigned integer of key_width bytes, or for key_width -N
 *            the UTF-8 bytes NUL-padded to N (read back with the trailing NULs stripped);
 *   TS       base85 of a big-endian float64 of POSIX seconds (10 characters);
 *   PAYLOAD  base85 of raw DEFLATE (level 6, no header) of P, where P is UTF-8 text, or 0xFC + raw
 *            bytes, or 0xFB + u16 big-endian type id + compact JSON (ensure_ascii). Compressed with
 *            Node's zlib: a valid raw-deflate stream that Python inflates to the same bytes, though
 *            Node's bundled zlib (Chromium's fork) may choose different (equivalent) codes than CPython's.
 */

/** P's first byte for a bytes value ("_GZIP_MAGIC" in TwainMQ, a misnomer). */
export const BYTES_MARK = 0xfc
/** P's first byte for a registered-type value ("_DATACLASS_MAGIC"). */
export const TYPED_MARK = 0xfb
/** Characters of the TS field. */
export const TS_CHARS = 10

/** How one topic encodes its lines. */
export interface LineFormat {
  /** TwainMQ's `key_width`: 1, 2, 4, 8, or -N for charN. */
  readonly keyWidth: number
  readonly keyType: KeyType
  /** Characters of the KEY field. */
  readonly keyChars: number
  /** `message_types`: name → id, and id → name. */
  readonly typeIds: ReadonlyMap<string, number>
  readonly typeNames: ReadonlyMap<number, string>
}

/** The line format of a topic from its `key_width` and `message_types`. */
export function lineFormat(keyWidth: number, messageTypes: ReadonlyMap<string, number> = new Map()): LineFormat {
  const keyType = keyTypeOfWidth(keyWidth)
  const typeNames = new Map<number, string>()
  for (const [name, id] of messageTypes) typeNames.set(id, name)
  return { keyWidth, keyType, keyChars: b85Length(Math.abs(keyWidth)), typeIds: messageTypes, typeNames }
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })
const scratch = Buffer.alloc(8)

/** The payload bytes P of a value: UTF-8 text, 0xFC + bytes, or 0xFB + type id + compact ASCII JSON. */
export function payloadOf(value: { text: string } | { bytes: Uint8Array } | { typeId: number; json: string }): Buffer {
  if ('text' in value) return Buffer.from(value.text, 'utf8')
  if ('bytes' in value) {
    const out = Buffer.allocUnsafe(value.bytes.length + 1)
    out[0] = BYTES_MARK
    out.set(value.bytes, 1)
    return out
  }
  if (!Number.isInteger(value.typeId) || value.typeId < 0 || value.typeId > 0xffff)
    throw new InvalidArgumentError(`Type id ${value.typeId} does not fit a u16`)
  const json = ensureAscii(value.json)
  const out = Buffer.allocUnsafe(json.length + 3)
  out[0] = TYPED_MARK
  out.writeUInt16BE(value.typeId, 1)
  out.write(json, 3, 'latin1')
  return out
}

/** Build one line (with its `\n`) from key bytes, seconds and payload bytes P. */
export function encodeLine(key: Uint8Array, seconds: number, payload: Uint8Array): Buffer {
  const packed = deflateRawSync(payload, { level: 6 })
  const out = Buffer.allocUnsafe(b85Length(key.length) + TS_CHARS + b85Length(packed.length) + 1)
  let at = b85EncodeInto(key, 0, key.length, out, 0)
  scratch.writeDoubleBE(seconds, 0)
  at = b85EncodeInto(scratch, 0, 8, out, at)
  at = b85EncodeInto(packed, 0, packed.length, out, at)
  out[at] = 0x0a
  return out
}

/** What a line holds. `unknownTypeId` is set (and `type` absent) for a type id the topic does not map. */
export interface DecodedLine {
  key: Key
  /** The stored time in ms (`microsOf(timestamp)` is the µs Python stored; see `secondsToMs`). */
  timestamp: number
  value: unknown
  type?: string
  unknownTypeId?: number
}

/** A line that cannot be decoded; `key`/`timestamp` are set when those fields were readable. */
export class LineError extends Error {
  key: Key | undefined
  timestamp: number | undefined
}

/** Decode the line `buf[start, end)` (without its `\n`). Throws `LineError` naming what is wrong. */
export function decodeLine(f: LineFormat, buf: Buffer, start: number, end: number): DecodedLine {
  const fail = (what: string, cause?: unknown, key?: Key, timestamp?: number): never => {
    const detail = cause instanceof Error ? `: ${cause.message}` : ''
    const e = new LineError(`${what}${detail}`, cause === undefined ? undefined : { cause })
    e.key = key
    e.timestamp = timestamp
    throw e
  }
  if (end - start < f.keyChars + TS_CHARS)
    fail(`line of ${end - start} characters is shorter than KEY (${f.keyChars}) + TS (${TS_CHARS})`)
  let key: Key
  try {
    key = decodeKeyField(f.keyWidth, f.keyChars, buf, start)
  } catch (e) {
    return fail('bad KEY field', e)
  }
  let seconds: number
  try {
    seconds = decodeSecondsField(buf, start + f.keyChars)
  } catch (e) {
    return fail('bad TS field', e, key)
  }
  if (!Number.isFinite(seconds)) fail(`bad TS field: ${seconds} is not a time`, undefined, key)
  const timestamp = secondsToMs(seconds)
  let p: Buffer
  try {
    const from = start + f.keyChars + TS_CHARS
    const packed = Buffer.allocUnsafe(b85DecodedLength(end - from))
    const n = b85DecodeInto(buf, from, end, packed, 0)
    p = inflateRawSync(packed.subarray(0, n))
  } catch (e) {
    return fail('bad PAYLOAD field', e, key, timestamp)
  }
  const mark = p[0]
  // A copy: inflate's output is a view of a 16 KiB chunk a message must not pin.
  if (mark === BYTES_MARK) return { key, timestamp, value: Buffer.from(p.subarray(1)) }
  if (mark === TYPED_MARK) {
    if (p.length < 3) fail('typed PAYLOAD shorter than its type id', undefined, key, timestamp)
    const id = p.readUInt16BE(1)
    let value: unknown
    try {
      value = parseJson(p.toString('utf8', 3))
    } catch (e) {
      return fail(`bad JSON in typed PAYLOAD (type id ${id})`, e, key, timestamp)
    }
    const type = f.typeNames.get(id)
    return type === undefined ? { key, timestamp, value, unknownTypeId: id } : { key, timestamp, value, type }
  }
  try {
    return { key, timestamp, value: utf8.decode(p) }
  } catch (e) {
    return fail('PAYLOAD text is not valid UTF-8', e, key, timestamp)
  }
}

/** The payload P of a stored record value (`kind`: 0 text, 1 bytes, 3 typed; JSON values have no TwainMQ form). */
export function recordPayload(
  f: LineFormat,
  topic: string,
  kind: number,
  value: Buffer | string,
  type: string | undefined,
): Buffer {
  if (kind === 0) return Buffer.from(value as string, 'utf8')
  if (kind === 1) return payloadOf({ bytes: value as Buffer })
  if (kind === 3) {
    const id = type === undefined ? undefined : f.typeIds.get(type)
    if (id === undefined) {
      const known = [...f.typeIds.keys()]
      throw new UnknownMessageTypeError(
        `Message type "${type}" is not in the message_types of TwainMQ topic "${topic}" (${known.length ? known.join(', ') : 'none'}); TwainMQ stores a type by its id`,
      )
    }
    return payloadOf({ typeId: id, json: typeof value === 'string' ? value : value.toString('utf8') })
  }
  throw new InvalidArgumentError(
    `TwainMQ topic "${topic}" stores strings, bytes and registered types only: send JSON.stringify(value) as a string, or register a type and send with { type }`,
  )
}
