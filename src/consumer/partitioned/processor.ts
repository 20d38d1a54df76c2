import type { Partitioner } from '../../core/hash64.js'
import type { Key } from '../../core/types.js'
import type { TypeCheck } from '../../producer/prepare.js'
import { AS_READ, type DeadLetterSend } from '../dead-letter.js'
import { GroupMessageImpl } from '../group-message.js'
import type { ConsumerContext } from '../member-core.js'
import type { ConsumerOptions, ResolvedConsumerOptions } from '../options.js'
import { Consumer } from './consumer.js'
import type { PartitionHandle } from './partition-message.js'
import { Outputs } from './outputs.js'
import {
  DEAD_LETTER_SEQ,
  DEAD_LETTER_TOKEN,
  processorMessages,
  type ProcessorMessageImpl,
  type ProcessorMessage,
} from './processor-message.js'

/**
 * Options of `twain.processor()` (README, "Exactly-once processing"): a partitioned consumer's
 * (`mode` is always partitioned; `claimAfterMs` applies to shared groups only), plus `partitioner`.
 */
export interface ProcessorOptions extends Omit<ConsumerOptions, 'mode' | 'deadLetter'> {
  /**
   * Topic that `term`ed messages go to, written as an output of the message: once per input,
   * however often it is termed (created with the source's key type and one partition if missing).
   * @default none: `term` drops the message
   */
  deadLetter?: string
  /** Maps an output's key to a partition of its topic. @default TwainMQ's `hash64(key) % partitions` (a producer's) */
  partitioner?: Partitioner
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

  /** @internal Use `twain.processor()`. */
  constructor(
    ctx: ConsumerContext,
    topics: string[],
    opts: ResolvedConsumerOptions,
    types: TypeCheck,
    partitioner: Partitioner,
    onClosed: ConstructorParameters<typeof Consumer>[3],
  ) {
    const outputs = new Outputs(ctx.store, opts.group, ctx.clientId, types, partitioner)
    // A dead letter is an output of its message (the one after every other): written once however often `term()` runs.
    const deadLetterSend: DeadLetterSend = (m, topic, key, value, options) => {
      const pm = m as ProcessorMessageImpl<unknown>
      const h = GroupMessageImpl.handle(pm) as PartitionHandle
      return outputs.send(pm, h, DEAD_LETTER_SEQ, DEAD_LETTER_TOKEN, topic, key, value, options, AS_READ)
    }
    super(ctx, topics, opts, onClosed, {
      make: processorMessages(outputs),
      deadLetterSend,
      attach: (ledger) => outputs.attach(ledger),
    })
    this.#outputs = outputs
  }

  /** Leave the group as a consumer does (in-flight messages' outputs are awaited within `drainTimeoutMs`), then stop writing outputs. */
  override async close(): Promise<void> {
    try {
      await super.close()
    } finally {
      this.#outputs.close()
    }
  }
}
