import type { Key, Message } from '../core/types.js'
import type { OwnedPartition } from './owned-partition.js'

/** A message delivered by a consumer group, with its settlement methods (nats' ack vocabulary). */
export interface GroupMessage<V = unknown, K extends Key = Key> extends Message<V, K> {
  /** How many times this message has been delivered (1 on first delivery). */
  deliveryCount: number
  /** Done: it will be committed (batched). Idempotent; ignored after the partition was lost. */
  ack(): void
  /** Deliver it again, after `delayMs`. */
  nack(options?: { delayMs?: number }): void
  /** Give up: send it to the consumer's dead-letter topic (with `x-…` headers), then ack it. */
  term(reason?: string): void
  /**
   * Hand it back unprocessed: it is delivered again next, and this delivery is not counted. The
   * operators use it for messages they pulled but never emitted, so `close()` need not wait for them.
   */
  release(): void
}

/** What a message needs from its consumer to settle. */
export interface Settler {
  ack(m: GroupMessageImpl<unknown>): void
  nack(m: GroupMessageImpl<unknown>, delayMs: number): void
  term(m: GroupMessageImpl<unknown>, reason: string): void
  release(m: GroupMessageImpl<unknown>): void
}

/** Internal state of a delivered message. */
export interface Handle {
  part: OwnedPartition
  generation: number
  /** Acked or termed (no further settlement counts). */
  settled: boolean
  /** Handed to the application and not settled. */
  delivered: boolean
}

// K is the key type the application asserted (twain.consumer<V, K>); nothing here depends on it.
export class GroupMessageImpl<V, K extends Key = any> implements GroupMessage<V, K> {
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
  deliveryCount = 0
  readonly #settler: Settler
  readonly #handle: Handle

  constructor(m: Message, settler: Settler, part: OwnedPartition) {
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
    this.#settler = settler
    this.#handle = { part, generation: part.generation, settled: false, delivered: false }
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
  static handle(m: GroupMessageImpl<unknown>): Handle {
    return m.#handle
  }
}
