import { InvalidArgumentError } from '../core/errors.js'
import type { Key } from '../core/types.js'
import { Consumer } from './partitioned/consumer.js'
import type { Partitioner } from '../core/hash64.js'
import type { TypeCheck } from '../producer/prepare.js'
import type { ConsumerContext } from './member-core.js'
import { Processor } from './partitioned/processor.js'
import type { ResolvedConsumerOptions } from './options.js'
import { SharedConsumer } from './shared/shared-consumer.js'

type Member = Consumer<any> | SharedConsumer<any>

/**
 * The live consumers of one `Twain` instance. A member name belongs to one live consumer of a group:
 * two consumers under one name would be one member to the backend (in shared mode, each re-reads
 * what the other holds, so both process every message), so a second one is refused at once, before
 * it touches the backend, until the first one's `close()` has finished.
 */
export class ConsumerSet {
  private readonly live = new Map<Member, { group: string; name: string | undefined }>()

  create<V, K extends Key = Key>(
    ctx: ConsumerContext,
    topics: string[],
    opts: ResolvedConsumerOptions,
  ): Consumer<V, K> | SharedConsumer<V, K> {
    if (opts.mode === 'shared' && !ctx.store.shared) {
      throw new InvalidArgumentError(
        `mode 'shared' (competing consumers) needs the Redis backend; this store is ${ctx.store.kind}: use mode 'partitioned'`,
      )
    }
    this.checkName(opts)
    const done = (c: Member) => void this.live.delete(c)
    const c =
      opts.mode === 'shared'
        ? new SharedConsumer<V, K>(ctx, topics, opts, done)
        : new Consumer<V, K>(ctx, topics, opts, done)
    this.live.set(c, { group: opts.group, name: opts.name })
    return c
  }

  /** A processor (`twain.processor()`): a partitioned member, under the same name rule. */
  createProcessor<V, K extends Key = Key>(
    ctx: ConsumerContext,
    topics: string[],
    opts: ResolvedConsumerOptions,
    types: TypeCheck,
    partitioner: Partitioner,
    state?: string,
  ): Processor<V, K> {
    this.checkName(opts)
    const c = new Processor<V, K>(ctx, topics, opts, types, partitioner, (done) => void this.live.delete(done), state)
    this.live.set(c, { group: opts.group, name: opts.name })
    return c
  }

  /** The groups of the live consumers. */
  groups(): string[] {
    return [...new Set([...this.live.values()].map((m) => m.group))]
  }

  values(): Member[] {
    return [...this.live.keys()]
  }

  /** A name in use by a live consumer of the group here is refused. */
  private checkName(opts: ResolvedConsumerOptions): void {
    if (opts.name === undefined) return
    for (const [c, m] of this.live) {
      if (m.group !== opts.group || m.name !== opts.name) continue
      throw new InvalidArgumentError(
        `Member name "${opts.name}" is in use in group "${opts.group}" by another consumer of this instance (${c instanceof SharedConsumer ? 'shared' : 'partitioned'}, ${c.closed ? 'still closing' : 'live'}): await its close() first, or use another name`,
      )
    }
  }

  clear(): void {
    this.live.clear()
  }
}
