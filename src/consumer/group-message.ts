import type { MessageFactory } from '../backends/record.js'
import type { Key, Message } from '../core/types.js'
import type { DeliveryTrace, Settlement } from '../telemetry/hooks.js'

/** A message delivered by a consumer group, with its settlement methods: `ack`, `nack` (redeliver, optionally after a delay), `term` (give up: to the dead-letter topic if there is one). */
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

/** What a message needs from its member to settle (each mode's ledger has one). */
export interface Settler<H> {
  ack(m: GroupMessageImpl<unknown, H>): void
  nack(m: GroupMessageImpl<unknown, H>, delayMs: number): void
  term(m: GroupMessageImpl<unknown, H>, reason: string): void
  release(m: GroupMessageImpl<unknown, H>): void
}

/** `GroupMessageImpl` or a subclass (a processor's messages): what the factories build. */
export type GroupMessageClass<H> = new (
  ...fields: ConstructorParameters<typeof GroupMessageImpl<unknown, H>>
) => GroupMessageImpl<unknown, H>

/**
 * The one `GroupMessage` class of both modes: the message's fields, its delivery count, and its
 * settlement methods, which hand it to its ledger's `Settler`. `H` is what the ledger keeps on it
 * (partitioned: its partition and generation, `partitioned/partition-message.ts`; shared: its
 * state, `shared/shared-message.ts`), reachable only through `GroupMessageImpl.handle`, so none
 * of it shows on the public object.
 */
// K is the key type the application asserted (twain.consumer<V, K>); nothing here depends on it.
export class GroupMessageImpl<V, H, K extends Key = any> implements GroupMessage<V, K> {
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
  readonly #settler: Settler<H>
  readonly #handle: H
  /** The mode's per-message state bits (partitioned: settled, delivered), beside the handle it may share. */
  #flags = 0
  /** This delivery's telemetry (its process span), ended by the settlement; only with telemetry on. */
  #trace: DeliveryTrace | undefined = undefined

  /** The fields one by one: a reader given a `MessageFactory` calls this as it decodes (no copy). */
  constructor(
    topic: string,
    partition: number,
    offset: number,
    key: Key,
    timestamp: number,
    value: unknown,
    headers: Record<string, string>,
    producerId: string,
    type: string | undefined,
    error: Error | undefined,
    deliveryCount: number,
    settler: Settler<H>,
    handle: H,
  ) {
    this.topic = topic
    this.partition = partition
    this.offset = offset
    this.key = key as K
    this.timestamp = timestamp
    this.value = value as V
    this.type = type // own properties either way: they are class fields
    this.headers = headers
    this.producerId = producerId
    this.error = error
    this.deliveryCount = deliveryCount
    this.#settler = settler
    this.#handle = handle
  }

  /** A copy of a read message (from a reader that builds plain messages). */
  static from<V, H>(
    m: Message,
    deliveryCount: number,
    settler: Settler<H>,
    handle: H,
    cls: GroupMessageClass<H> = GroupMessageImpl,
  ): GroupMessageImpl<V, H> {
    return new cls(
      m.topic,
      m.partition,
      m.offset,
      m.key,
      m.timestamp,
      m.value,
      m.headers,
      m.producerId,
      m.type,
      m.error,
      deliveryCount,
      settler,
      handle,
    ) as GroupMessageImpl<V, H>
  }

  /**
   * What a reader calls to build the messages of one read as `cls` (this class, or a subclass such
   * as a processor's), each passed through `finish` when given (see `MessageFactory`).
   */
  static factory<H>(
    settler: Settler<H>,
    handle: H,
    cls: GroupMessageClass<H> = GroupMessageImpl,
    finish?: (m: GroupMessageImpl<unknown, H>) => GroupMessageImpl<unknown, H>,
  ): MessageFactory {
    return new GroupMessageFactory(settler, handle, cls, finish)
  }

  ack(): void {
    if (this.#trace !== undefined) this.#settled('ack')
    this.#settler.ack(this)
  }

  nack(options?: { delayMs?: number }): void {
    if (this.#trace !== undefined) this.#settled('nack')
    const delay = options?.delayMs ?? 0
    this.#settler.nack(this, Number.isFinite(delay) && delay > 0 ? delay : 0)
  }

  term(reason?: string): void {
    if (this.#trace !== undefined) this.#settled('term', reason ?? 'terminated')
    this.#settler.term(this, reason ?? 'terminated')
  }

  release(): void {
    if (this.#trace !== undefined) this.#settled('release')
    this.#settler.release(this)
  }

  #settled(how: Settlement, reason?: string): void {
    const t = this.#trace as DeliveryTrace
    this.#trace = undefined
    t.settled(how, this, reason)
  }

  /** @internal Give this delivery its telemetry (ended by the settlement; a new delivery gets a new one). */
  static traced(m: GroupMessageImpl<unknown, unknown>, trace: DeliveryTrace): void {
    m.#trace?.settled('release', m)
    m.#trace = trace
  }

  /** @internal This delivery's telemetry, until it is settled. */
  static trace(m: GroupMessageImpl<unknown, unknown>): DeliveryTrace | undefined {
    return m.#trace
  }

  /** @internal What the member keeps on the message. */
  static handle<H>(m: GroupMessageImpl<unknown, H>): H {
    return m.#handle
  }

  /** @internal The mode's state bits of the message. */
  static flags(m: GroupMessageImpl<unknown, unknown>): number {
    return m.#flags
  }

  /** @internal Set the mode's state bits of the message. */
  static setFlags(m: GroupMessageImpl<unknown, unknown>, flags: number): void {
    m.#flags = flags
  }
}

/** Builds a read's messages, first delivery, sharing `settler` and `handle` (`GroupMessageImpl.factory`). */
class GroupMessageFactory<H> implements MessageFactory {
  constructor(
    private readonly settler: Settler<H>,
    private readonly handle: H,
    private readonly cls: GroupMessageClass<H>,
    private readonly finish: ((m: GroupMessageImpl<unknown, H>) => GroupMessageImpl<unknown, H>) | undefined,
  ) {}

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
  ): GroupMessageImpl<unknown, H> {
    const m = new this.cls(
      topic,
      partition,
      offset,
      key,
      timestamp,
      value,
      headers,
      producerId,
      type,
      undefined,
      0,
      this.settler,
      this.handle,
    )
    return this.finish === undefined ? m : this.finish(m)
  }
}
