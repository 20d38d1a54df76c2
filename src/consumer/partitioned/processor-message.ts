import { capturedPromise, lastCaptured } from '../../core/captured-promise.js'
import { FencedError, InvalidArgumentError } from '../../core/errors.js'
import type { Key, Message } from '../../core/types.js'
import { GroupMessageImpl, type GroupMessage, type Settler } from '../group-message.js'
import type { MessageMaker } from './ledger.js'
import { rewoundFrom } from './owned-partition.js'
import { current, isSettled, type PartitionHandle } from './partition-message.js'
import {
  leftToAck,
  type OutputMetadata,
  type OutputOptions,
  type OutputReject,
  type OutputResolve,
} from './output-record.js'
import type { Outputs } from './outputs.js'
import { MessageState, type StateOwner } from './state/message-state.js'
import type { PreparedRecord } from '../../producer/send-record.js'
import type { PartitionState, StateWrite } from './state/partition-state.js'
import type { ProcessorState } from './state/processor-state.js'
import { MAX_STATE_WRITES, type StateStore } from './state/state-store.js'
import { TIMER_SEQ } from './state/timer-turn.js'

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
  /**
   * The processor's state store for this message's partition (`ProcessorOptions.state`; README
   * "State stores"): reads see the writes of the partition's earlier messages; this message's
   * writes are stored exactly once, with its outputs, when it is acked.
   * @throws `InvalidArgumentError` when the processor has no state store.
   */
  readonly state: StateStore
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
export class ProcessorMessageImpl<V>
  extends GroupMessageImpl<V, PartitionHandle>
  implements ProcessorMessage<V>, StateOwner
{
  /** Given by the maker right after construction (`ProcessorMessageImpl.bind`): off the public object. */
  #outputs: Outputs | undefined
  #store: ProcessorState | undefined
  /** Its partition's state, as `partitionState()` last found it. */
  #state: PartitionState | undefined
  #view: MessageState | undefined
  /** Of a stateful message: 1 once queued for its state's flush (acked, outputs stored), 2 once its writes were sent. */
  #flush = 0
  #seq = 0
  #delivery = -1
  #pending = 0
  #failure: unknown = undefined
  #ackWanted = false
  /** The delivery (count) in which it was nacked: no more outputs until it is delivered again. */
  #nackedIn = -1
  /** @internal What its partition's state keeps of it (`StatefulMessage`). */
  stateTag: object | undefined = undefined
  /** @internal */
  stateCount = 0
  /** @internal */
  stateFirst: StateWrite | undefined = undefined
  /** @internal */
  stateRest: Map<string, StateWrite> | undefined = undefined
  /** @internal */
  stateBytes = 0
  /** @internal */
  stateReady = false
  /** @internal */
  stateCarried = false

  send<OV = unknown>(topic: string, key: Key, value: OV, options?: OutputOptions): Promise<OutputMetadata> {
    // A static executor: no closure per output (its resolving functions read at once).
    const sent = capturedPromise<OutputMetadata>()
    const { resolve, reject } = lastCaptured
    this.emit(topic, key, value, options, resolve, reject, sent)
    return sent
  }

  /**
   * @internal `send` without a promise (`Outputs.emit`): `resolve` or `reject` is called once,
   * `reject` synchronously when the output is refused before it is queued. `sent`: `send`'s
   * promise, marked handled (`leftToAck`) before a failure the processor acts on rejects it.
   */
  emit(
    topic: string,
    key: Key,
    value: unknown,
    options: OutputOptions | undefined,
    resolve: OutputResolve,
    reject: OutputReject,
    sent?: Promise<unknown>,
  ): void {
    const h = GroupMessageImpl.handle(this)
    if (!this.isOpen())
      return reject(new InvalidArgumentError(`send() to "${topic}" after the message ${this.#where()} was settled`))
    if (!current(h) || h.part.releasing) {
      // Its partition's next owner delivers it again: nothing for the caller to act on.
      leftToAck(sent)
      return reject(
        new FencedError(
          `send() of message ${this.#where()}: its partition is no longer this member's; nothing was stored`,
        ),
      )
    }
    this.#turn()
    // Numbers from TIMER_SEQ on are the partition's timer turns' (decision 208).
    if (this.#seq >= TIMER_SEQ - MAX_STATE_WRITES - 1)
      return reject(
        new InvalidArgumentError(`Message ${this.#where()} sent more than ${TIMER_SEQ - MAX_STATE_WRITES - 2} outputs`),
      )
    const trace = GroupMessageImpl.trace(this)
    if (trace !== undefined)
      options = { ...options, headers: trace.outputHeaders(options?.headers) as Record<string, string> }
    this.#pending++
    // The outputs tell this message when the output settles (`outputDone`), before `resolve` or `reject`.
    const outputs = this.#outputs as Outputs
    outputs.emit(this, h, this.#seq++, this.#delivery, topic, key, value, options, resolve, reject, undefined, sent)
  }

  /** Outputs are numbered per delivery. */
  #turn(): void {
    if (this.#delivery !== this.deliveryCount) {
      this.#delivery = this.deliveryCount
      this.#seq = 0
      this.#failure = undefined
    }
  }

  get state(): StateStore {
    if (this.#store === undefined)
      throw new InvalidArgumentError(
        `This processor has no state store: create it with twain.processor(topic, { group, state: '<store name>' })`,
      )
    return (this.#view ??= new MessageState(this))
  }

  /** @internal */
  stateOf(): { state: PartitionState; generation: number } | undefined {
    const state = this.partitionState()
    return state === undefined ? undefined : { state, generation: GroupMessageImpl.handle(this).generation }
  }

  /** @internal `stateOf()`'s state, without an object made for the pair (kept until it is retired). */
  partitionState(): PartitionState | undefined {
    const had = this.#state
    if (had !== undefined && !had.retired) return had
    return (this.#state = this.#store?.of(GroupMessageImpl.handle(this).part))
  }

  /** @internal The delivery generation of its partition it was read in. */
  stateGeneration(): number {
    return GroupMessageImpl.handle(this).generation
  }

  /** @internal Whether it may still send outputs and write state: not settled, no ack asked for, not nacked in this delivery. */
  isOpen(): boolean {
    return !(isSettled(this) || this.#ackWanted || this.#flush !== 0 || this.#nackedIn === this.deliveryCount)
  }

  /** @internal */
  writeRefusal(): string | undefined {
    return this.isOpen() ? undefined : `message ${this.#where()} was settled`
  }

  /** @internal */
  stateRecordLimit(): number {
    return (this.#store as ProcessorState).recordLimit
  }

  /** @internal */
  prepareState(key: string, value: unknown): PreparedRecord {
    const h = GroupMessageImpl.handle(this)
    return (this.#store as ProcessorState).prepare(this.#outputs as Outputs, key, value, h.part.partition)
  }

  /** @internal Its turn to write its state changes (every earlier message of its partition went first). */
  flushState(hasWrites: boolean, state: PartitionState): void {
    this.#flush = 2
    if (isSettled(this)) return // termed: its dead letter is written
    if (!hasWrites && !this.stateCarried) return this.#finishAck()
    this.#turn()
    if (!hasWrites) {
      // Carried (decision 227): acked with the next message's writes, once they are stored.
      this.stateCarried = false
      this.#ackWanted = true
      this.#pending++
      return state.carry(this, this.#delivery)
    }
    this.#ackWanted = true
    // One count for all its writes: the flush they join tells the message once (`outputDone`).
    this.#pending++
    const store = this.#store as ProcessorState
    this.#seq += state.flush(
      this,
      this.#delivery,
      this.#seq,
      GroupMessageImpl.handle(this),
      store,
      this.#outputs as Outputs,
    )
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
    if (this.#pending === 0 && this.#failure === undefined && this.#store === undefined) return super.ack()
    if (this.#flush !== 0) return // its state flush is under way: it acks itself
    this.#ackWanted = true
    if (this.#pending === 0) this.#finishAck()
  }

  override nack(options?: { delayMs?: number }): void {
    this.#outputs?.discard(this)
    this.#ackWanted = false
    this.#nackedIn = this.deliveryCount
    // A stateful partition goes back to this message: the later ones read what it wrote.
    if (this.#store !== undefined)
      this.#store.rewind(GroupMessageImpl.handle(this), options?.delayMs ?? 0, rewoundFrom(this))
    super.nack(options)
  }

  /** A stateful message handed back goes back with its partition (the later ones read what it wrote). */
  override release(): void {
    if (this.#store !== undefined) this.#store.rewind(GroupMessageImpl.handle(this), 0)
    super.release()
  }

  override term(reason?: string): void {
    const store = this.#store
    if (store !== undefined && (this.stateOf()?.state.writesOf(this) ?? 0) > 0)
      throw new InvalidArgumentError(
        `term() of message ${this.#where()}, which wrote state: the partition's later messages may have read it; nack() it to process it again`,
      )
    super.term(reason)
    // Without a dead letter it is settled now: its turn in the partition's flushes is taken (with nothing to write).
    if (store !== undefined && !store.deadLettered) {
      const at = this.stateOf()
      at?.state.done(this, at.generation)
    }
  }

  /** Give a new message its processor's outputs (and state store). */
  static bind<V>(m: ProcessorMessageImpl<V>, outputs: Outputs, store?: ProcessorState): ProcessorMessageImpl<V> {
    m.#outputs = outputs
    m.#store = store
    return m
  }

  #done(): void {
    this.#pending--
    if (this.#pending === 0 && this.#ackWanted) this.#finishAck()
  }

  /**
   * Every output settled after `ack()`: acked when all were stored, else delivered again (soon). A
   * stateful message then waits for its turn to write its state changes (`flushState`), and is
   * acked once they are stored too.
   */
  #finishAck(): void {
    this.#ackWanted = false
    const failure = this.#failure
    if (failure !== undefined) {
      this.#failure = undefined
      this.#nackedIn = this.deliveryCount
      // Its partition goes back to it, so no later message's output (or state) comes before its own.
      ;(this.#outputs as Outputs).rewind(GroupMessageImpl.handle(this), failure, rewoundFrom(this))
      return super.nack({ delayMs: 1000 })
    }
    if (this.#store === undefined) return super.ack()
    const state = this.partitionState()
    if (state === undefined) return super.ack() // its partition is gone: the ack is ignored
    if (this.#flush === 0) {
      this.#flush = 1
      return state.done(this, this.stateGeneration())
    }
    state.applied(this)
    super.ack()
  }
}

/** A processor's messages, each given `outputs` (and the state store). */
export function processorMessages(outputs: Outputs, store?: ProcessorState): MessageMaker {
  const finish = (m: GroupMessageImpl<unknown, PartitionHandle>) =>
    ProcessorMessageImpl.bind(m as ProcessorMessageImpl<unknown>, outputs, store)
  return {
    factory: (settler, handle) => GroupMessageImpl.factory(settler, handle, ProcessorMessageImpl, finish),
    from: <V>(m: Message, settler: Settler<PartitionHandle>, handle: PartitionHandle) =>
      finish(
        GroupMessageImpl.from<V, PartitionHandle>(m, 0, settler, handle, ProcessorMessageImpl),
      ) as ProcessorMessageImpl<V>,
  }
}
