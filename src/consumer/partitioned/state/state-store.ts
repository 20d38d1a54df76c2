import type { Key } from '../../../core/types.js'
import type { PreparedRecord } from '../../../producer/send-record.js'
import type { FlushWrite } from './state-flush.js'

/**
 * A processor's keyed state for the partition of the message it is read through
 * (`ProcessorMessage.state`; README "State stores"). Reads see the writes of every message of the
 * partition handed out before; a message's writes are stored in the store's compacted changelog
 * topic, exactly once, when the message is acked (after its outputs), and restored from it when
 * the partition is assigned, here or in another process.
 */
export interface StateStore {
  /** The value of `key`, or undefined. */
  get<T = unknown>(key: Key): T | undefined
  /** Whether `key` has a value. */
  has(key: Key): boolean
  /**
   * Set `key` to `value` (any value a topic stores: a string, a Buffer, JSON; not `null` or
   * `undefined`: use `delete`). A message may write at most `MAX_STATE_WRITES` keys and
   * `MAX_STATE_BYTES` in all (its writes are stored in one atomic call).
   * @throws InvalidArgumentError for a bad value, after the message was settled, or past a limit;
   * `MessageTooLargeError` for a value over the changelog's `maxMessageBytes`.
   */
  set(key: Key, value: unknown): void
  /** Remove `key` (a tombstone in the changelog). */
  delete(key: Key): void
  /** How many keys have a value. */
  readonly size: number
  /** Every key with its value (in no particular order). */
  entries<T = unknown>(): IterableIterator<[Key, T]>
}

/** Most keys one message may write (its writes go to the changelog in one atomic call). */
export const MAX_STATE_WRITES = 1000

/** Most bytes (keys and values, and a record's overhead each) one message may write, for the same reason. */
export const MAX_STATE_BYTES = 1024 * 1024

/** What a changelog record counts against `MAX_STATE_BYTES` besides its key and value (headers, framing). */
export const STATE_RECORD_OVERHEAD = 160

/** A write of `value` by input `by`, encoded as `rec`, with what it counts against `MAX_STATE_BYTES` (and a flush's bytes). */
export function flushWrite<B extends { readonly offset: number }>(
  rec: PreparedRecord,
  value: unknown,
  by: B,
): FlushWrite & { by: B } {
  const bytes = rec.valueBytes >= 0 ? rec.valueBytes : Buffer.byteLength(rec.value as string)
  return { value, rec, bytes: rec.keyBytes + bytes + STATE_RECORD_OVERHEAD, by, seq: -1 }
}

/** The longest JSON text of a number (`-1.2345678901234567e-308`), with room to spare. */
const NUMBER_BYTES = 26
/** Longest string and most fields a write may have for its encoding to wait (`deferredBytes`). */
const DEFERRED_STRING = 512
const DEFERRED_FIELDS = 16

/**
 * A bound on the bytes of `value`'s changelog record value, when encoding it can wait until its
 * flush is written (only the last write of each key of a flush is then encoded): a value whose
 * encoding cannot fail and that cannot change in the meantime. A finite number, a boolean, a
 * string of at most 512 UTF-16 units (immutable all); with `owned` (an object its writer made for
 * the write and never changes: `windowed()`'s windows), also a plain object of at most 16 such
 * fields. -1 for any other value: it is encoded (and so checked) when written.
 */
export function deferredBytes(value: unknown, owned: boolean): number {
  switch (typeof value) {
    case 'number':
      return Number.isFinite(value) ? NUMBER_BYTES : -1
    case 'boolean':
      return 5
    case 'string':
      // A JSON escape is at most 6 bytes per UTF-16 unit (the stored text, UTF-8, at most 3).
      return value.length <= DEFERRED_STRING ? value.length * 6 + 2 : -1
    case 'object':
      return owned && value !== null ? objectBytes(value) : -1
    default:
      return -1
  }
}

function objectBytes(o: object): number {
  if (Object.getPrototypeOf(o) !== Object.prototype) return -1
  let n = 2
  let fields = 0
  for (const k in o) {
    if (++fields > DEFERRED_FIELDS || k.length > DEFERRED_STRING) return -1
    const b = deferredBytes((o as Record<string, unknown>)[k], false)
    if (b < 0) return -1
    n += k.length * 6 + 4 + b
  }
  return n
}

/** A store a writer can give values it made for the write and never changes (`deferredBytes`' `owned`): the message's own. */
export interface OwnedWrites {
  /** `bytes`: `deferredBytes(value, true)` when the writer knows it without looking at the value (computed when not given). */
  setOwned(key: Key, value: unknown, bytes?: number): void
}
