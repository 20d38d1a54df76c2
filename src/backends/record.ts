import { InvalidArgumentError } from '../core/errors.js'
import type { KeyCodec } from '../core/keys.js'
import type { Key, Message } from '../core/types.js'
import { encodeValue, type ValueKind } from '../core/values.js'

/**
 * Builds read messages from their decoded fields (`type` undefined when there is none): a reader
 * given one returns the objects it makes instead of plain ones, so a consumer group's message
 * class is made once, not made plain and copied (decision 173). What it returns must be a
 * `Message` with those fields (the reader goes on from its `offset`). An object with a method
 * rather than a closure: one class of factory keeps the call site monomorphic, so it is inlined.
 */
export interface MessageFactory {
  message(
    topic: string,
    partition: number,
    offset: number,
    key: Key,
    timestamp: number,
    value: unknown,
    headers: Record<string, string>,
    producerId: string,
    type: string | undefined,
  ): Message
}

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
  /**
   * Byte length of `value`; for a string, its UTF-8 length or `-1` when not measured yet. Encoders
   * size their buffers with `valueBound` and learn a string's length as they write it: measuring
   * UTF-8 separately costs a third as much as writing it.
   */
  valueBytes: number
  /** Registered message type name, for `ValueKind.Typed`. */
  type?: string | undefined
  headers?: Record<string, string> | undefined
}

/**
 * The header of an idempotent send (`send(key, value, { id })`): a record carrying it is stored at
 * most once per id and partition within the sender's window (`TopicStore.appendIdempotent`).
 * Readers see it as any header.
 */
export const ID_HEADER = 'x-twain-id'
/** Longest idempotency id, in UTF-8 bytes. */
export const MAX_ID_BYTES = 512
/**
 * Ids a partition remembers (`appendIdempotent`): its last this many at least, whatever the window;
 * older ones are forgotten first, so memory stays bounded (both backends keep them in two
 * generations of this many: up to twice as many).
 */
export const MAX_REMEMBERED_IDS = 100_000

/** The longest window an idempotent append takes: a longer one would make a first send read that much of the log. */
export const MAX_WINDOW_MS = 24 * 60 * 60 * 1000

/**
 * The arguments of an idempotent append checked, the same for every backend: `windowMs` an
 * integer from 1 ms to a day, and every id (the `ID_HEADER` header) at most `MAX_ID_BYTES`.
 * @throws InvalidArgumentError naming the bad value.
 */
export function checkIdempotent(records: readonly RecordInput[], windowMs: number): void {
  if (!Number.isInteger(windowMs) || windowMs < 1 || windowMs > MAX_WINDOW_MS)
    throw new InvalidArgumentError(
      `windowMs (a producer's dedupWindowMs) must be an integer from 1 to ${MAX_WINDOW_MS} (a day), got ${String(windowMs)}`,
    )
  for (const r of records) {
    const id = r.headers?.[ID_HEADER]
    if (id !== undefined && id.length * 3 > MAX_ID_BYTES && Buffer.byteLength(id, 'utf8') > MAX_ID_BYTES)
      throw new InvalidArgumentError(
        `An idempotency id is ${Buffer.byteLength(id, 'utf8')} UTF-8 bytes; at most ${MAX_ID_BYTES} are allowed`,
      )
  }
}

/** `RecordInput.valueBytes` of a string value not measured yet: its encoder measures it as it writes it. */
export const UNMEASURED = -1

/** Stored bytes of a record key as `codec.recordKey` gives it (at most 65535). */
export function keyBytesOf(key: Buffer | number, codec: KeyCodec): number {
  const keyBytes = typeof key === 'number' ? codec.width : key.length
  if (keyBytes > 65535) throw new InvalidArgumentError(`Key is ${keyBytes} bytes; at most 65535 are allowed`)
  return keyBytes
}

/** What {@link recordInput} takes besides the key and the value. */
export interface RecordExtras {
  /** Registered message type name, for `ValueKind.Typed`. Default: none. */
  type?: string | undefined
  /** Default: none. */
  headers?: Record<string, string> | undefined
  /** Milliseconds since the epoch. Default: `Date.now()`. */
  timestamp?: number
}

/**
 * A record for a topic whose keys `codec` encodes: the key checked and stored the codec's way (a
 * number in the codec's width for `u8/u16/u32`, else its bytes), the value already encoded as
 * `kind` (a string is left {@link UNMEASURED}). For writers other than the producer, such as the
 * HTTP gateway; the producer builds its records in place (producer/prepare.ts).
 */
export function recordInput(
  codec: KeyCodec,
  key: unknown,
  kind: ValueKind,
  value: Buffer | string,
  extras: RecordExtras = {},
): RecordInput {
  const k = codec.recordKey(key)
  return {
    key: k,
    keyBytes: keyBytesOf(k, codec),
    timestamp: extras.timestamp ?? Date.now(),
    kind,
    value,
    valueBytes: typeof value === 'string' ? UNMEASURED : value.length,
    type: extras.type,
    headers: extras.headers,
  }
}

/** Most bytes a record's value can take: `valueBytes`, or 3 per UTF-16 unit of an unmeasured string. */
export function valueBound(r: RecordInput): number {
  return r.valueBytes >= 0 ? r.valueBytes : (r.value as string).length * 3
}

/** UTF-8 bytes of header names and values (what headers count against `maxMessageBytes`). */
export function headerBytes(headers: Record<string, string>): number {
  let n = 0
  for (const k in headers) n += Buffer.byteLength(k) + Buffer.byteLength(headers[k] as string)
  return n
}

/** A bound on `headerBytes` without measuring: 3 bytes per UTF-16 unit, and `each` more per header (its framing). */
export function headerBound(headers: Record<string, string>, each = 0): number {
  let n = 0
  let count = 0
  for (const k in headers) {
    n += k.length + (headers[k] as string).length
    count++
  }
  return 3 * n + each * count
}

/** The key bytes of a record (allocates for numeric keys; for slow paths such as Redis encoding). */
export function recordKeyBytes(r: RecordInput): Buffer {
  if (typeof r.key !== 'number') return r.key
  const b = Buffer.allocUnsafe(r.keyBytes)
  b.writeUIntBE(r.key, 0, r.keyBytes)
  return b
}

/**
 * One stored record, its value not decoded: offset, timestamp, type, headers (undefined when it
 * has none), value kind, and where the value's stored bytes are (`buf[start, end)`: UTF-8 text
 * for text, JSON and typed values). Made by `PartitionReader.readRaw` (no key or value decoding);
 * the record and `buf` may be the reader's own (reused), so they are valid only until that
 * reader's next call.
 */
export interface RawRecord {
  offset: number
  timestamp: number
  type: string | undefined
  headers: Record<string, string> | undefined
  kind: ValueKind
  buf: Buffer
  start: number
  end: number
}

/**
 * What raw reads may still give (`PartitionReader.readRaw`), shared by the reads of one response
 * page: `left` value bytes. A read stops before a record whose value bytes exceed `left` and sets
 * `full`, except for the first record counted (`given` 0): one is always given.
 */
export interface RawBudget {
  left: number
  /** Records counted so far. */
  given: number
  full: boolean
}

/**
 * A decoded message as a raw record, its value encoded again the way the producer stores values:
 * `readRaw` of a store whose values are kept in another form (a Python TwainMQ line).
 */
export function rawOf(m: Message): RawRecord {
  const e = encodeValue(m.value, m.type !== undefined)
  const buf = typeof e.bytes === 'string' ? Buffer.from(e.bytes, 'utf8') : e.bytes
  return {
    offset: m.offset,
    timestamp: m.timestamp,
    type: m.type,
    headers: m.headers,
    kind: e.kind,
    buf,
    start: 0,
    end: buf.length,
  }
}

/** A budget of `bytes` value bytes. */
export const rawBudget = (bytes: number): RawBudget => ({ left: bytes, given: 0, full: false })

/** Whether `budget` has room for a record of `size` value bytes (then counted). */
export function fits(budget: RawBudget | undefined, size: number): boolean {
  if (budget === undefined) return true
  if (budget.full || (budget.given > 0 && size > budget.left)) {
    budget.full = true
    return false
  }
  budget.left -= size
  budget.given++
  return true
}
