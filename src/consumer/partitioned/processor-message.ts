import { FencedError, InvalidArgumentError } from '../../core/errors.js'
import type { Key, Message } from '../../core/types.js'
import { GroupMessageImpl, type GroupMessage, type Settler } from '../group-message.js'
import type { MessageMaker } from './ledger.js'
import { current, isSettled, type PartitionHandle } from './partition-message.js'
import type { OutputMetadata, OutputOptions, Outputs } from './outputs.js'

/**
 * A message of a processor (`twain.processor()`): a `GroupMessage` that can send outputs. Each
 * output is stored exactly once, whatever crashes, restarts, rebalances and retries happen
 * (README, "Exactly-once processing"); `ack()` commits the message once its outputs are stored.
 */
export interface ProcessorMessage<V = unknown, K extends Key = Key> extends GroupMessage<V, K> {
  /**
   * Send an output of this message to `topic` (any topic of the store, any number of outputs).
   * Resolves with where it is stored; `duplicate: true` when an earlier delivery of this message
   * (this process's or a predecessor's) stored it, and nothing was written. The n-th output of a
   * delivery is recognised as the n-th of any other: send the same outputs in the same order.
   * @throws `FencedError` when the message's partition is no longer this member's (nothing is
   * stored); `InvalidArgumentError` after `ack()`, `term()`, or for a bad key, value or option.
   */
  send<OV = unknown>(topic: string, key: Key, value: OV, options?: OutputOptions): Promise<OutputMetadata>
}

/** The token of a dead letter's output (`outputDone` counts it in no delivery). */
export const DEAD_LETTER_TOKEN = -1

/** The sequence number of a message's dead letter (`term()`): above any output's, so it is one per input. */
export const DEAD_LETTER_SEQ = 2 ** 31 - 1

/**
 * The processor's message class. `ack()` waits for the message's outputs: the message is acked (and
 * so committed) only once every output it sent is stored; if one failed, it is delivered again
 * instead (its stored outputs are then recognised): its partition is rewound to it when the write
 * failed for good (`Outputs`), else (e.g. a fenced write) it is nacked. `nack()` drops the outputs
 * not yet written.
 */
export class ProcessorMessageImpl<V> extends GroupMessageImpl<V, PartitionHandle> implements ProcessorMessage<V> {
  /** Given by the maker right after construction (`ProcessorMessageImpl.bind`): off the public object. */
  #outputs: Outputs | undefined
  #seq = 0
  #delivery = -1
  #pending = 0
  #failure: unknown = undefined
  #ackWanted = false
  /** The delivery (count) in which it was nacked: no more outputs until it is delivered again. */
  #nackedIn = -1

  send<OV = unknown>(topic: string, key: Key, value: OV, options?: OutputOptions): Promise<OutputMetadata> {
    const h = GroupMessageImpl.handle(this)
    if (isSettled(this) || this.#ackWanted || this.#nackedIn === this.deliveryCount)
      return Promise.reject(
        new InvalidArgumentError(`send() to "${topic}" after the message ${this.#where()} was settled`),
      )
    if (!current(h) || h.part.releasing)
      return Promise.reject(
        new FencedError(
          `send() of message ${this.#where()}: its partition is no longer this member's; nothing was stored`,
        ),
      )
    if (this.#delivery !== this.deliveryCount) {
      this.#delivery = this.deliveryCount
      this.#seq = 0
      this.#failure = undefined
    }
    if (this.#seq >= DEAD_LETTER_SEQ)
      return Promise.reject(
        new InvalidArgumentError(`Message ${this.#where()} sent more than ${DEAD_LETTER_SEQ - 1} outputs`),
      )
    const trace = GroupMessageImpl.trace(this)
    if (trace !== undefined)
      options = { ...options, headers: trace.outputHeaders(options?.headers) as Record<string, string> }
    this.#pending++
    // The outputs tell this message when the output settles (`outputDone`), before its promise does.
    return (this.#outputs as Outputs).send(this, h, this.#seq++, this.#delivery, topic, key, value, options)
  }

  /** @internal One of its outputs, sent in delivery `token` (`DEAD_LETTER_TOKEN`: its dead letter), settled. */
  outputDone(token: number, failure: unknown): void {
    if (token === DEAD_LETTER_TOKEN) return
    if (failure !== undefined && token === this.#delivery && this.#failure === undefined) this.#failure = failure
    this.#done()
  }

  #where(): string {
    return `${this.topic}/${this.partition}@${this.offset}`
  }

  override ack(): void {
    if (this.#pending === 0 && this.#failure === undefined) return super.ack()
    this.#ackWanted = true
    if (this.#pending === 0) this.#finishAck()
  }

  override nack(options?: { delayMs?: number }): void {
    this.#outputs?.discard(this)
    this.#ackWanted = false
    this.#nackedIn = this.deliveryCount
    super.nack(options)
  }

  /** Give a new message its processor's outputs. */
  static bind<V>(m: ProcessorMessageImpl<V>, outputs: Outputs): ProcessorMessageImpl<V> {
    m.#outputs = outputs
    return m
  }

  #done(): void {
    this.#pending--
    if (this.#pending === 0 && this.#ackWanted) this.#finishAck()
  }

  /** Every output settled after `ack()`: acked when all were stored, else delivered again (soon). */
  #finishAck(): void {
    this.#ackWanted = false
    if (this.#failure === undefined) return super.ack()
    this.#failure = undefined
    this.#nackedIn = this.deliveryCount
    super.nack({ delayMs: 1000 })
  }
}

/** A processor's messages, each given `outputs`. */
export function processorMessages(outputs: Outputs): MessageMaker {
  const finish = (m: GroupMessageImpl<unknown, PartitionHandle>) =>
    ProcessorMessageImpl.bind(m as ProcessorMessageImpl<unknown>, outputs)
  return {
    factory: (settler, handle) => GroupMessageImpl.factory(settler, handle, ProcessorMessageImpl, finish),
    from: <V>(m: Message, settler: Settler<PartitionHandle>, handle: PartitionHandle) =>
      finish(
        GroupMessageImpl.from<V, PartitionHandle>(m, 0, settler, handle, ProcessorMessageImpl),
      ) as ProcessorMessageImpl<V>,
  }
}
