import type { EntryRef } from '../backends/shared.js'
import type { Key, Message } from '../core/types.js'
import type { GroupMessage } from './group-message.js'

/**
 * Where a shared-mode message stands: `buffered` (fetched, not handed out), `delivered` (handed out,
 * not settled), `waiting` (nacked, re-delivered later), `terming` (dead-letter write under way),
 * `settled` (acked or termed), `lost` (another member claimed it, or it was trimmed), `given`
 * (handed back to the group unprocessed at close).
 */
export type SharedState = 'buffered' | 'delivered' | 'waiting' | 'terming' | 'settled' | 'lost' | 'given'

/** What a shared-mode message needs from its consumer to settle. */
export interface SharedSettler {
  ack(m: SharedMessage<unknown>): void
  nack(m: SharedMessage<unknown>, delayMs: number): void
  term(m: SharedMessage<unknown>, reason: string): void
  release(m: SharedMessage<unknown>): void
}

/** A message of a shared group: a `GroupMessage` whose `deliveryCount` is Redis's. */
// K is the key type the application asserted (twain.consumer<V, K>); nothing here depends on it.
export class SharedMessage<V, K extends Key = any> implements GroupMessage<V, K> {
  topic: string
  partition: number
  offset: number
  key: K
  timestamp: number
  value: V
  type?: string
  headers: Record<string, string>
  producerId: string
  error?: Error
  deliveryCount: number
  readonly #settler: SharedSettler
  #state: SharedState = 'buffered'

  constructor(m: Message, deliveryCount: number, settler: SharedSettler) {
    this.topic = m.topic
    this.partition = m.partition
    this.offset = m.offset
    this.key = m.key as K
    this.timestamp = m.timestamp
    this.value = m.value as V
    if (m.type !== undefined) this.type = m.type
    this.headers = m.headers
    this.producerId = m.producerId
    if (m.error !== undefined) this.error = m.error
    this.deliveryCount = deliveryCount
    this.#settler = settler
  }

  ack(): void {
    this.#settler.ack(this)
  }

  nack(options?: { delayMs?: number }): void {
    const delay = options?.delayMs ?? 0
    this.#settler.nack(this, Number.isFinite(delay) && delay > 0 ? delay : 0)
  }

  term(reason?: string): void {
    this.#settler.term(this, reason ?? 'terminated')
  }

  release(): void {
    this.#settler.release(this)
  }

  /** @internal */
  static state(m: SharedMessage<unknown>): SharedState {
    return m.#state
  }

  /** @internal */
  static setState(m: SharedMessage<unknown>, s: SharedState): void {
    m.#state = s
  }

  /** @internal The entry it came from. */
  static ref(m: SharedMessage<unknown>): EntryRef {
    return { topic: m.topic, partition: m.partition, offset: m.offset }
  }
}

/** `"t/0@1, t/0@2"` for entries (at most ten named). */
export const entryList = (entries: readonly EntryRef[]): string =>
  entries
    .slice(0, 10)
    .map((e) => `${e.topic}/${e.partition}@${e.offset}`)
    .join(', ') + (entries.length > 10 ? ` and ${entries.length - 10} more` : '')

/**
 * Put a message handed back into the buffer in offset order among its partition's buffered messages
 * (so released runs keep their order), ahead of other partitions' messages when it is the partition's last.
 */
export function insertInOrder<M extends EntryRef>(buffer: M[], msg: M): void {
  const same = (b: M) => b.partition === msg.partition && b.topic === msg.topic
  let at = buffer.findIndex((b) => same(b) && b.offset > msg.offset)
  if (at < 0) {
    let last = -1
    buffer.forEach((b, i) => {
      if (same(b) && b.offset < msg.offset) last = i
    })
    at = last + 1
  }
  buffer.splice(at, 0, msg)
}
