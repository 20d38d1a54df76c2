import type { Backend } from '../backends/backend.js'
import type { Message } from '../core/types.js'
import type { BatchIterator, BatchSource } from '../stream/batch-iterator.js'
import type { StreamControl } from '../stream/message-stream.js'
import { Wake } from '../stream/wake.js'
import { ConsumedRetention } from './consumed-retention.js'
import { DeadLetterWriter, type DeadLetterSend } from './dead-letter.js'
import { drain } from './drain.js'
import { ConsumerEvents } from './events.js'
import { commitBeforeExit } from './exit-commit.js'
import { GroupMessageImpl } from './group-message.js'
import { FailureReport } from './failure-report.js'
import { MemberViews, type ViewedMember } from './member-views.js'
import type { ResolvedConsumerOptions } from './options.js'
import type { DeliveryTelemetry, InstanceTelemetry } from '../telemetry/hooks.js'
import { groupTelemetry } from '../telemetry/process.js'

/** What every consumer of one `Twain` instance is made with. */
export interface ConsumerContext {
  store: Backend
  /** The instance's id: the `producerId` of the dead letters its consumers write. */
  clientId: string
  /** The instance's live iterations (it ends them on close). */
  iterations: Set<BatchIterator<unknown>>
  /** Registered-type validation of fetched messages. */
  decode: ((batch: Message[]) => Message[] | Promise<Message[]>) | undefined
  /** The instance's telemetry (process spans, consumed-message metrics), if it has any. */
  telemetry?: InstanceTelemetry | undefined
}

/**
 * What the member core asks of a mode's ledger: which buffered messages may be handed out, how a
 * delivery is recorded and counted, and what becomes of messages a view took and never emitted.
 */
export interface MemberLedger<V, H> {
  /**
   * Deliver the first of the `n` buffered messages that need no decision (the mode's fast path);
   * returns how many it delivered, which `take` then hands out as they are.
   */
  deliverPrefix(n: number): number
  /** A buffered message may still be handed out (not settled, lost or given back). */
  deliverable(m: GroupMessageImpl<V, H>): boolean
  /** Deliveries made before this one (the message's counter, as the mode keeps it). */
  deliveriesMade(m: GroupMessageImpl<V, H>): number
  /** Record that `m` is handed to the application. */
  deliver(m: GroupMessageImpl<V, H>): void
  /** Take back messages a view received but never emitted. */
  unread(items: GroupMessageImpl<V, H>[]): void
  /** A handed-out message went stale (a processor's partition rewound): views pass over it. None when undefined. */
  stale?(m: GroupMessageImpl<V, H>): boolean
}

/**
 * The turns of a member's life that only its mode's wiring (the public class, which holds the
 * parts) can take; the core calls them when its state asks for them.
 */
export interface MemberLife {
  /** Whether something iterates changed: the parts ref or unref their timers and watches. */
  keepAliveChanged(): void
  /** `demand` changed: start reading, or stop (shared mode: hand back what was not handed out). */
  demandChanged(): void
  /** Commit what was acked (shared: send the waiting acknowledgements); at a natural exit. */
  flushCommits(): Promise<void>
  /** The mode's way of leaving: stop reading, drain, flush, leave. `close()` runs it once. */
  shutdown(): Promise<void>
}

/** How a member's core is made, besides the context, topics and options. */
export interface MemberWiring<V, H, L extends MemberLedger<V, H>> {
  /** This member's id in the group. */
  memberId: string
  /** Control of the public stream's iterations (`StreamSource.attach`). */
  stream: StreamControl
  life: MemberLife
  /** The mode's ledger, made with the core it records in. */
  ledger: (core: MemberCore<V, H, L>) => L
  /** The member closed (its instance forgets it). */
  onClosed: () => void
  /** How it writes dead letters, when not as a consumer does (a processor's go through its outputs). */
  deadLetterSend?: DeadLetterSend
  /** Whether a view that handed out `TURN_EVERY` messages in one go lets the event loop turn first (default: never). */
  turnWanted?: () => boolean
  /** What the member is called in its warnings (`twainmq <kind> <id> of group …`). @default 'consumer' */
  kind?: 'consumer' | 'processor'
}

/**
 * What both group modes' members do the same way, owned by each mode's public class beside the
 * mode's ledger: the membership's state, views and events, the buffer and the order in which it
 * is handed out (with `maxDeliveries`), one release-ordering rule, the dead-letter writer,
 * consumed retention, the commit at a natural exit, the drain wait, the fatal-failure path and
 * the shutdown's first and last steps. It is the source of the public stream's iterations (each
 * one a view of the membership).
 */
export class MemberCore<V, H, L extends MemberLedger<V, H> = MemberLedger<V, H>> implements ViewedMember<
  GroupMessageImpl<V, H>
> {
  readonly events = new ConsumerEvents()
  state: 'running' | 'closing' | 'closed' = 'running'
  /** Fetched, not handed out (in delivery order). */
  buffer: GroupMessageImpl<V, H>[] = []
  /** Room to fetch may have appeared (or the member is ending). */
  readonly fetchWake = new Wake()
  /** Something settled or was handed back: the drain re-checks. */
  readonly settleWake = new Wake()
  readonly dlq: DeadLetterWriter | undefined
  readonly retention: ConsumedRetention
  readonly backend: Backend
  readonly decode: ConsumerContext['decode']
  readonly memberId: string
  readonly ledger: L
  readonly views: MemberViews<GroupMessageImpl<V, H>>
  readonly #report: FailureReport
  /** Process spans and metrics of the messages handed out, when the instance has telemetry. */
  readonly #telemetry: DeliveryTelemetry | undefined
  readonly #stream: StreamControl
  readonly #life: MemberLife
  readonly #onClosed: () => void
  /** Cancels the commit at a natural process exit (exit-commit.ts). */
  readonly #exitCommit: () => void
  /** Removes the listener on the user's `signal` (at close: a long-lived signal must not keep closed members). */
  readonly #unlistenSignal: () => void
  #closing: Promise<void> | undefined

  constructor(
    ctx: ConsumerContext,
    readonly topics: string[],
    readonly opts: ResolvedConsumerOptions,
    wiring: MemberWiring<V, H, L>,
  ) {
    this.backend = ctx.store
    this.decode = ctx.decode
    this.memberId = wiring.memberId
    this.#telemetry = ctx.telemetry && groupTelemetry(ctx.telemetry, opts.group, ctx.clientId)
    this.#stream = wiring.stream
    this.#life = wiring.life
    this.#onClosed = wiring.onClosed
    this.dlq = opts.deadLetter
      ? new DeadLetterWriter(ctx.store, opts.deadLetter, ctx.clientId, wiring.deadLetterSend)
      : undefined
    this.retention = new ConsumedRetention(ctx.store, (e) => this.emitError(e))
    this.#report = new FailureReport(this.events, wiring.kind ?? 'consumer', wiring.memberId, opts.group)
    const life = wiring.life
    this.views = new MemberViews(
      this,
      {
        keepAliveChanged: () => life.keepAliveChanged(),
        demandChanged: () => life.demandChanged(),
        // The refill mark does not hold while the application waits (decisions 222, 223): the fetch loop looks again.
        waitingStarted: () => this.fetchWake.wake(),
      },
      wiring.turnWanted,
    )
    this.ledger = wiring.ledger(this)
    this.#exitCommit = commitBeforeExit(() => this.#life.flushCommits().catch((e) => this.emitError(e)))
    // Deferred: the iterations' own abort listeners must end them with AbortError before close() ends them quietly.
    const signal = opts.signal
    const onAbort = () => queueMicrotask(() => void this.close().catch(() => undefined))
    signal?.addEventListener('abort', onAbort, { once: true })
    this.#unlistenSignal = () => signal?.removeEventListener('abort', onAbort)
  }

  // ---- the public stream's source --------------------------------------------------------

  /** A view: an iteration of the membership. */
  open(): BatchSource<GroupMessageImpl<V, H>> {
    return this.views.open()
  }

  /** An iteration begun after the member closed: none, or one that throws its fatal failure. */
  afterClose(): BatchSource<GroupMessageImpl<V, H>> | undefined {
    const f = this.#report.failure
    if (f === undefined) return undefined
    this.failureSeen()
    return { next: () => Promise.reject(f), close: () => undefined }
  }

  /** A view threw the fatal failure (so it needs no warning). */
  failureSeen(): void {
    this.#report.taken()
  }

  /** Messages a view took and never emitted: the ledger takes them back. */
  unread(items: GroupMessageImpl<V, H>[]): void {
    this.ledger.unread(items)
  }

  /** The fatal failure that ended the member, if any. */
  get failure(): unknown {
    return this.#report.failure
  }

  /** Whether a fatal failure ended the member. */
  get failed(): boolean {
    return this.#report.failure !== undefined
  }

  /** Something iterates the member: its timers and watches keep the process alive. */
  get keepAlive(): boolean {
    return this.views.count > 0
  }

  /** Something wants messages: an iteration, or `poll()` was called. */
  get demand(): boolean {
    return this.views.demand
  }

  // ---- handing out ------------------------------------------------------------------------

  /** Whether views must ask `skip` of each message (the ledger has `stale`). */
  get skips(): boolean {
    return this.ledger.stale !== undefined
  }

  /** `MemberLedger.stale`. */
  skip(m: GroupMessageImpl<V, H>): boolean {
    return this.ledger.stale !== undefined && this.ledger.stale(m)
  }

  /**
   * Hand up to `n` buffered messages to the application, in buffer order. A message already
   * delivered `maxDeliveries` times is termed instead (its `deliveryCount` the deliveries made).
   */
  take(n: number): GroupMessageImpl<V, H>[] {
    const max = this.opts.maxDeliveries
    const ledger = this.ledger
    let i = ledger.deliverPrefix(Math.min(n, this.buffer.length))
    if (i === this.buffer.length) {
      const all = this.buffer // all of it delivered: hand out the array itself
      this.buffer = []
      if (this.#telemetry !== undefined) this.#traced(all)
      return all
    }
    const out = i > 0 ? this.buffer.slice(0, i) : []
    for (; i < this.buffer.length && out.length < n; i++) {
      const m = this.buffer[i] as GroupMessageImpl<V, H>
      if (!ledger.deliverable(m)) continue
      if (max !== undefined && ledger.deliveriesMade(m) >= max) {
        m.deliveryCount = ledger.deliveriesMade(m)
        m.term(`delivered ${m.deliveryCount} times (maxDeliveries ${max})`)
        continue
      }
      ledger.deliver(m)
      out.push(m)
    }
    this.buffer = i === this.buffer.length ? [] : this.buffer.slice(i)
    if (this.#telemetry !== undefined) this.#traced(out)
    return out
  }

  /** Give each message handed out its process span and count it (telemetry on). */
  #traced(out: GroupMessageImpl<V, H>[]): void {
    if (out.length === 0) return
    const traces = (this.#telemetry as DeliveryTelemetry).delivered(out)
    for (let i = 0; i < out.length; i++) {
      const t = traces[i]
      if (t !== undefined) GroupMessageImpl.traced(out[i] as GroupMessageImpl<V, H>, t)
    }
  }

  /**
   * Put a message handed back (`release()`, a view's unread end) into the buffer: in offset order
   * among its partition's buffered messages, so released runs keep their order whatever order
   * they are released in, and ahead of other partitions' messages when it is the partition's last.
   */
  putBack(m: GroupMessageImpl<V, H>): void {
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

  /** Wake every view waiting for messages (new ones arrived, or the member is ending). */
  wakeViews(): void {
    this.views.wake()
  }

  // ---- failures ---------------------------------------------------------------------------

  /** A background failure: an `'error'` event, else a process warning (once per code). */
  emitError(e: unknown): void {
    if (this.state === 'closed') return
    this.#report.error(e, this.views.count > 0)
  }

  /**
   * A fatal failure (e.g. a topic that does not exist), reported once: to the 'error' listeners if
   * there are any, else to the iterations under way (each throws it), else as a process warning.
   * Every iteration, also one begun later, throws it; the member closes, and its closing reports
   * nothing more.
   */
  fail(e: unknown): void {
    if (this.#report.failure !== undefined) return
    this.#report.failure = e
    this.emitError(e)
    this.#stream.fail(e)
    void this.close().catch(() => undefined)
  }

  // ---- leaving ----------------------------------------------------------------------------

  /** Leave the group (the mode's shutdown runs once). Idempotent. */
  close(): Promise<void> {
    this.#unlistenSignal()
    this.#closing ??= this.#life.shutdown()
    return this.#closing
  }

  /** End every iteration quietly (the stream part of closing; shutdowns call it). */
  endIterations(): Promise<void> {
    return this.#stream.end()
  }

  /** Wait (up to `drainTimeoutMs`) until `drained()`; settlements wake `settleWake`. */
  drain(drained: () => boolean): Promise<void> {
    return drain(this.settleWake, drained, this.opts.drainTimeoutMs)
  }

  /** The shutdown's first step: `closing`, no exit commit, the fetch loop and views woken. False when already closed. */
  beginShutdown(): boolean {
    if (this.state === 'closed') return false
    this.state = 'closing'
    this.#exitCommit()
    this.fetchWake.wake()
    this.wakeViews()
    return true
  }

  /** The shutdown's last step. */
  finishShutdown(): void {
    this.state = 'closed'
    this.events.clear()
    this.#onClosed()
  }
}
