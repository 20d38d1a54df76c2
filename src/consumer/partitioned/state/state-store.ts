import type { Key } from '../../../core/types.js'

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
