import { InvalidArgumentError } from '../../core/errors.js'
import type { Partitioner } from '../../core/hash64.js'
import type { Key } from '../../core/types.js'
import type { TypeCheck } from '../../producer/prepare.js'
import { AS_READ, type DeadLetterSend } from '../dead-letter.js'
import { GroupMessageImpl } from '../group-message.js'
import type { ConsumerContext } from '../member-core.js'
import type { ConsumerOptions, ResolvedConsumerOptions } from '../options.js'
import { Consumer } from './consumer.js'
import { current, type PartitionHandle } from './partition-message.js'
import type { OutputMetadata } from './output-record.js'
import { Outputs } from './outputs.js'
import { ProcessorState } from './state/processor-state.js'
import {
  DEAD_LETTER_SEQ,
  DEAD_LETTER_TOKEN,
  processorMessages,
  type ProcessorMessageImpl,
  type ProcessorMessage,
} from './processor-message.js'

/** A processor's `maxInFlight` unless given (a consumer's is 1000). */
export const PROCESSOR_MAX_IN_FLIGHT = 4000
/**
 * Outputs queued for their write from which a processor's iteration, having handed out many
 * messages in one go, lets the event loop turn so that they are written (decision 233).
 */
const TURN_OUTPUTS = 512

/**
 * Options of `twain.processor()` (README, "Exactly-once processing"): a partitioned consumer's
 * (`mode` is always partitioned; `claimAfterMs` applies to shared groups only), plus `partitioner`.
 */
export interface ProcessorOptions extends Omit<ConsumerOptions, 'mode' | 'deadLetter' | 'maxInFlight'> {
  /**
   * Most messages fetched but not yet acked; fetching pauses beyond it. A processor's ack waits
   * for its message's outputs and state writes to be stored, so more are in flight than a
   * consumer's: its reads go on while a partition's outputs and state flush are being written.
   * @default 4000
   */
  maxInFlight?: number
  /**
   * Topic that `term`ed messages go to, written as an output of the message: once per input,
   * however often it is termed (created with the source's key type and one partition if missing).
   * @default none: `term` drops the message
   */
  deadLetter?: string
  /** Maps an output's key to a partition of its topic. @default TwainMQ's `hash64(key) % partitions` (a producer's) */
  partitioner?: Partitioner
  /**
   * A keyed state store, `m.state` (README "State stores"): its name, 1 to 100 of `A-Z a-z 0-9 _ . -`.
   * Its changelog is the compacted topic `<group>-<name>-changelog` (created with the input
   * topic's partitions; the processor reads one topic). Seeks are refused.
   * @default none: `m.state` throws
   */
  state?: string
}

/**
 * A member of a partitioned consumer group whose messages send outputs stored exactly once
 * (README, "Exactly-once processing"; docs/format.md, "Exactly-once outputs"): a `Consumer` of
 * `ProcessorMessage`s with the consumer's `commit`, `assignments`, `on`, `close` and
 * `[Symbol.asyncDispose]`. A message's `ack()` takes effect once its outputs are stored, so the
 * committed position never passes an input whose outputs are not all stored; a successor that
 * processes an input again finds its stored outputs and stores nothing twice; a member that lost
 * a partition (its session lapsed) stores nothing more for it (`FencedError`).
 */
export class Processor<V = unknown, K extends Key = Key> extends Consumer<V, K, ProcessorMessage<V, K>> {
  readonly #outputs: Outputs
  readonly #state: ProcessorState | undefined

  /** @internal Use `twain.processor()`. */
  constructor(
    ctx: ConsumerContext,
    topics: string[],
    opts: ResolvedConsumerOptions,
    types: TypeCheck,
    partitioner: Partitioner,
    onClosed: ConstructorParameters<typeof Consumer>[3],
    stateName?: string,
  ) {
    const outputs = new Outputs(ctx.store, opts.group, ctx.clientId, types, partitioner)
    let state: ProcessorState | undefined
    if (stateName !== undefined) {
      if (topics.length !== 1)
        throw new InvalidArgumentError(
          `A processor with a state store reads one topic (its state is kept per partition), got ${topics.length}: ${topics.join(', ')}`,
        )
      state = new ProcessorState(ctx.store, opts.group, stateName, topics[0] as string, opts.deadLetter !== undefined)
    }
    // A dead letter is an output of its message (the one after every other): written once however often `term()` runs.
    const deadLetterSend: DeadLetterSend = (m, topic, key, value, options) => {
      const pm = m as ProcessorMessageImpl<unknown>
      const h = GroupMessageImpl.handle(pm) as PartitionHandle
      const sent = new Promise<OutputMetadata>((resolve, reject) =>
        outputs.emit(pm, h, DEAD_LETTER_SEQ, DEAD_LETTER_TOKEN, topic, key, value, options, resolve, reject, AS_READ),
      )
      if (state === undefined) return sent
      // A termed message of a stateful partition takes its turn once its dead letter is stored.
      return sent.then((r) => {
        const at = pm.stateOf()
        at?.state.done(pm, at.generation)
        return r
      })
    }
    super(ctx, topics, opts, onClosed, {
      make: processorMessages(outputs, state),
      deadLetterSend,
      turnWanted: () => outputs.queued() >= TURN_OUTPUTS,
      attach: (ledger) => {
        outputs.attach(ledger)
        // A message of a partition rewound (a failed output, a nack of a stateful message) or sought
        // since it was handed out is not emitted: it comes again, and nothing it did would count.
        ledger.stale = (m) => !current(GroupMessageImpl.handle(m))
        if (state === undefined) return
        state.attach(ledger)
        const s = state
        ledger.hooks = {
          opened: (p) => s.opened(p),
          dropped: (p) => s.dropped(p),
          fetched: (msgs, p) => s.fetched(msgs as unknown as ProcessorMessageImpl<unknown>[], p),
        }
      },
    })
    this.#outputs = outputs
    this.#state = state
  }

  /** @internal The state store and outputs of `p` (for its timer turns: `windowed()`'s idle partitions). */
  static stateOf(p: Processor<never, never>): { state: ProcessorState; outputs: Outputs } | undefined {
    return p.#state === undefined ? undefined : { state: p.#state, outputs: p.#outputs }
  }

  /** Refused with a state store (its state cannot go back); else as `Consumer.seek`. */
  override seek(topic: string, partition: number, offset: number): void
  override seek(topic: string, partition: number, to: { time: number | Date }): Promise<void>
  override seek(topic: string, partition: number, to: number | { time: number | Date }): void | Promise<void> {
    if (this.#state !== undefined) {
      const e = new InvalidArgumentError(
        `seek() of ${topic}/${partition}: processor with state store "${this.#state.name}" cannot move its partitions (its state is that of its position); reset the group with twain.resetGroup(group, topic, to, { state: "${this.#state.name}" }) to start over with the state cleared`,
      )
      if (typeof to === 'object' && to !== null) return Promise.reject(e)
      throw e
    }
    return typeof to === 'object' && to !== null ? super.seek(topic, partition, to) : super.seek(topic, partition, to)
  }

  /** Leave the group as a consumer does (in-flight messages' outputs are awaited within `drainTimeoutMs`), then stop writing outputs. */
  override async close(): Promise<void> {
    try {
      await super.close()
    } finally {
      this.#outputs.close()
      this.#state?.close()
    }
  }
}
