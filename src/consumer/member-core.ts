import type { Backend } from '../backends/backend.js'
import type { Key, Message } from '../core/types.js'
import type { BatchIterator } from '../stream/batch-iterator.js'
import { Wake } from '../stream/wake.js'
import { ConsumedRetention } from './consumed-retention.js'
import { DeadLetterWriter } from './dead-letter.js'
import { drain } from './drain.js'
import { commitBeforeExit } from './exit-commit.js'
import type { GroupMessage, GroupMessageImpl } from './group-message.js'
import { MemberStream } from './member-stream.js'
import type { ResolvedConsumerOptions } from './options.js'

/** What every consumer of one `Twain` instance is made with. */
export interface ConsumerContext {
  store: Backend
  /** The instance's id: the `producerId` of the dead letters its consumers write. */
  clientId: string
  /** The instance's live iterations (it ends them on close). */
  iterations: Set<BatchIterator<unknown>>
  /** Registered-type validation of fetched messages. */
  decode: ((batch: Message[]) => Message[] | Promise<Message[]>) | undefined
}

/**
 * What both group modes' members do the same way: the buffer and the order in which it is handed
 * out (with `maxDeliveries`), the dead-letter writer, consumed retention, the commit at a natural
 * exit, the drain wait and the shutdown's first and last steps. The mode (partitioned or shared)
 * supplies its ledger through the hooks: which buffered messages are deliverable, how a delivery
 * is recorded, how commits are flushed.
 */
export abstract class MemberCore<V, H, K extends Key = Key> extends MemberStream<GroupMessage<V, K>> {
  /** Fetched, not handed out (in delivery order). */
  protected buffer: GroupMessageImpl<V, H>[] = []
  /** Room to fetch may have appeared (or the member is ending). */
  protected readonly fetchWake = new Wake()
  /** Something settled or was handed back: the drain re-checks. */
  protected readonly settleWake = new Wake()
  protected readonly dlq: DeadLetterWriter | undefined
  protected readonly retention: ConsumedRetention
  /** Cancels the commit at a natural process exit (exit-commit.ts). */
  private readonly exitCommit: () => void

  protected readonly backend: Backend
  protected readonly decode: ConsumerContext['decode']

  constructor(
    ctx: ConsumerContext,
    readonly topics: string[],
    protected readonly opts: ResolvedConsumerOptions,
    private readonly onClosed: (c: MemberCore<any, any>) => void,
  ) {
    super(opts.signal, ctx.iterations)
    this.backend = ctx.store
    this.decode = ctx.decode
    this.dlq = opts.deadLetter ? new DeadLetterWriter(ctx.store, opts.deadLetter, ctx.clientId) : undefined
    this.retention = new ConsumedRetention(ctx.store, (e) => this.emitError(e))
    this.exitCommit = commitBeforeExit(() => this.flushCommits().catch((e) => this.emitError(e)))
  }

  /** The group this member belongs to. */
  get group(): string {
    return this.opts.group
  }

  /** Commit what was acked (shared: send the waiting acknowledgements); at a natural exit. */
  protected abstract flushCommits(): Promise<void>
  /** A buffered message may still be handed out (not settled, lost or given back). */
  protected abstract deliverable(m: GroupMessageImpl<V, H>): boolean
  /** Deliveries made before this one (the message's counter, as the mode keeps it). */
  protected abstract deliveriesMade(m: GroupMessageImpl<V, H>): number
  /** Record that `m` is handed to the application. */
  protected abstract deliver(m: GroupMessageImpl<V, H>): void

  /**
   * Deliver the first of the `n` buffered messages that need no decision (a mode's fast path);
   * returns how many it delivered, which `take` then hands out as they are.
   */
  protected deliverPrefix(_n: number): number {
    return 0
  }

  /**
   * Hand up to `n` buffered messages to the application, in buffer order. A message already
   * delivered `maxDeliveries` times is termed instead (its `deliveryCount` the deliveries made).
   */
  protected take(n: number): GroupMessageImpl<V, H>[] {
    const max = this.opts.maxDeliveries
    let i = this.deliverPrefix(Math.min(n, this.buffer.length))
    if (i === this.buffer.length) {
      const all = this.buffer // all of it delivered: hand out the array itself
      this.buffer = []
      return all
    }
    const out = i > 0 ? this.buffer.slice(0, i) : []
    for (; i < this.buffer.length && out.length < n; i++) {
      const m = this.buffer[i] as GroupMessageImpl<V, H>
      if (!this.deliverable(m)) continue
      if (max !== undefined && this.deliveriesMade(m) >= max) {
        m.deliveryCount = this.deliveriesMade(m)
        m.term(`delivered ${m.deliveryCount} times (maxDeliveries ${max})`)
        continue
      }
      this.deliver(m)
      out.push(m)
    }
    this.buffer = i === this.buffer.length ? [] : this.buffer.slice(i)
    return out
  }

  /**
   * Put a message handed back (`release()`, a view's unread end) into the buffer: in offset order
   * among its partition's buffered messages, so released runs keep their order whatever order
   * they are released in, and ahead of other partitions' messages when it is the partition's last.
   */
  protected putBack(m: GroupMessageImpl<V, H>): void {
    const same = (b: GroupMessageImpl<V, H>) => b.partition === m.partition && b.topic === m.topic
    let at = this.buffer.findIndex((b) => same(b) && b.offset > m.offset)
    if (at < 0) {
      let last = -1
      this.buffer.forEach((b, i) => {
        if (same(b) && b.offset < m.offset) last = i
      })
      at = last + 1
    }
    this.buffer.splice(at, 0, m)
  }

  /** Wait (up to `drainTimeoutMs`) until `drained()`; settlements wake `settleWake`. */
  protected drain(drained: () => boolean): Promise<void> {
    return drain(this.settleWake, drained, this.opts.drainTimeoutMs)
  }

  /** The shutdown's first step: `closing`, no exit commit, the fetch loop and views woken. False when already closed. */
  protected beginShutdown(): boolean {
    if (this.state === 'closed') return false
    this.state = 'closing'
    this.exitCommit()
    this.fetchWake.wake()
    this.wakeViews()
    return true
  }

  /** The shutdown's last step. */
  protected finishShutdown(): void {
    this.state = 'closed'
    this.events.clear()
    this.onClosed(this)
  }
}
