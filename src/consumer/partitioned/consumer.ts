import { randomBytes } from 'node:crypto'
import { hostname } from 'node:os'
import type { TopicPartition } from '../../backends/assign.js'
import type { MemberSpec } from '../../backends/group.js'
import { FencedError, InvalidArgumentError } from '../../core/errors.js'
import { checkTime } from '../../core/event-time.js'
import { checkInt } from '../../core/names.js'
import { partitionKey } from '../../core/partition-key.js'
import type { Key } from '../../core/types.js'
import type { BatchSource } from '../../stream/batch-iterator.js'
import { MessageStream, type StreamControl } from '../../stream/message-stream.js'
import { endsAtCreation } from '../ends-at-creation.js'
import type { DeadLetterSend } from '../dead-letter.js'
import type { ConsumerEventMap } from '../events.js'
import { fetchLoop } from '../fetch-loop.js'
import type { GroupMessage } from '../group-message.js'
import { MemberCore, type ConsumerContext } from '../member-core.js'
import type { ResolvedConsumerOptions } from '../options.js'
import { Commits } from './commits.js'
import { Coordination } from './coordination.js'
import { PartitionedLedger, type MessageMaker, type PartitionedCore } from './ledger.js'
import { exposeLedger } from './ledger-of.js'
import type { PartitionHandle } from './partition-message.js'
import { PartitionReads } from './partition-reads.js'

/** What makes a partitioned member a processor (`twain.processor()`): its messages, its dead letters, its outputs' view of the ledger. */
export interface Processing {
  make: MessageMaker
  deadLetterSend: DeadLetterSend
  attach(ledger: PartitionedLedger<unknown>): void
  /** Whether the processor waits for the event loop to turn (outputs queued for their write). */
  turnWanted(): boolean
}

/**
 * A member of a consumer group (partitioned mode). It is a `MessageStream` of `GroupMessage`s:
 * every `for await` or subscription is a view of the one membership, and ending a view leaves the
 * member in the group. Only `close()`, `twain.close()` or the `signal` leave.
 *
 * The class wires its private parts, as kafkajs wires its consumer: the member core (views, buffer,
 * hand-out, failures, the shutdown's first and last steps), this mode's ledger (owned partitions,
 * settlement), and the parts that take the ledger — the coordination (membership steps), the
 * commits and the partition reads, which the fetch loop runs.
 */
export class Consumer<V = unknown, K extends Key = Key, M extends GroupMessage<V, K> = GroupMessage<V, K>>
  extends MessageStream<M>
  implements AsyncDisposable
{
  readonly #core: PartitionedCore<V>
  readonly #ledger: PartitionedLedger<V>
  readonly #member: MemberSpec
  readonly #commits: Commits
  /** Seeks issued per partition (`topic:partition`), so a time seek applies only if no later seek came. */
  readonly #seekTurns = new Map<string, number>()
  readonly #reads: PartitionReads<V>
  readonly #coordination: Coordination
  /** Settles when the member has started (its first coordination step scheduled) or failed to. */
  readonly #started: Promise<void>

  static {
    exposeLedger((c) => (c as Consumer<unknown>).#ledger)
  }

  /** @internal Use `twain.consumer()` (`processing`: a processor's messages, `twain.processor()`). */
  constructor(
    ctx: ConsumerContext,
    topics: string[],
    opts: ResolvedConsumerOptions,
    onClosed: (c: Consumer<any>) => void,
    processing?: Processing,
  ) {
    let stream!: StreamControl
    super(
      {
        open: () => this.#core.open() as unknown as BatchSource<M>,
        afterClose: () => this.#core.afterClose() as unknown as BatchSource<M> | undefined,
        attach: (c) => (stream = c),
      },
      opts.signal,
      ctx.iterations,
    )
    const id = `${opts.name ?? 'member'}-${randomBytes(5).toString('hex')}`
    this.#member = {
      id,
      name: opts.name ?? id,
      topics: [...topics].sort(),
      sessionTimeoutMs: opts.sessionTimeoutMs,
      pid: process.pid,
      host: hostname(),
      ...(processing ? { processor: true } : {}),
    }
    this.#core = new MemberCore<V, PartitionHandle, PartitionedLedger<V>>(ctx, topics, opts, {
      memberId: id,
      stream,
      life: {
        keepAliveChanged: () => this.#updateRefs(),
        // Reads start with the first iteration or poll; a member without one keeps its buffer and reads no more.
        demandChanged: () => {
          if (this.#core.demand) this.#core.fetchWake.wake()
        },
        flushCommits: () => this.#commits.commitParts(),
        shutdown: () => this.#shutdown(),
      },
      ledger: (core) => new PartitionedLedger<V>(core, () => this.#scheduleStep(), processing?.make),
      onClosed: () => onClosed(this),
      deadLetterSend: processing?.deadLetterSend,
      turnWanted: processing?.turnWanted,
      kind: processing ? 'processor' : 'consumer',
    })
    this.#ledger = this.#core.ledger
    processing?.attach(this.#ledger)
    this.#commits = new Commits(this.#ledger, this.#member)
    this.#reads = new PartitionReads(this.#ledger)
    this.#coordination = new Coordination(this.#ledger, this.#member, this.#commits, this.#reads)
    this.#started = this.#start(endsAtCreation(ctx.store, topics, opts.from))
  }

  /** The topics this member consumes. */
  get topics(): string[] {
    return this.#core.topics
  }

  /** The group this member belongs to. */
  get group(): string {
    return this.#core.opts.group
  }

  /** This member's id in the group. */
  get memberId(): string {
    return this.#member.id
  }

  /**
   * Next buffered message, without waiting (TwainMQ's `poll`). The first call starts reading ahead
   * (up to `maxInFlight`), so it usually returns `undefined`; later calls get what arrived.
   */
  poll(): M | undefined {
    return this.pollMany(1)[0]
  }

  /** Up to `n` buffered messages, without waiting (the first call starts reading ahead, as `poll()`). */
  pollMany(n = 10): M[] {
    return this.#core.views.poll(n) as unknown as M[]
  }

  on<E extends keyof ConsumerEventMap>(event: E, listener: (payload: ConsumerEventMap[E]) => void): () => void {
    return this.#core.events.on(event, listener)
  }

  /** Like {@link on}, for the next event only; returns a function that removes the listener if it has not run. */
  once<E extends keyof ConsumerEventMap>(event: E, listener: (payload: ConsumerEventMap[E]) => void): () => void {
    return this.#core.events.once(event, listener)
  }

  /** The partitions this member owns now. */
  assignments(): TopicPartition[] {
    return [...this.#ledger.parts.values()]
      .filter((p) => !p.lost)
      .map((p) => ({ topic: p.topic, partition: p.partition }))
  }

  /** Run a coordination step now (join, release, acquire) and wait for it. */
  async rebalance(): Promise<void> {
    await this.#started // a step before the start would meet what the start meets (and report it again)
    this.#coordination.schedule()
    await this.#coordination.idle()
  }

  /** Commit the acked prefix of every owned partition now. Rejects with `FencedError` for lost partitions. */
  commit(): Promise<void> {
    return this.#commits.commit()
  }

  /**
   * Continue a partition from `offset` (applied when the partition is acquired if it is not owned
   * now), or from a time: `{ time }` (ms since the epoch or a `Date`) goes to the partition's first
   * offset whose timestamp is at or after it (its end when none is), once looked up (the returned
   * promise). A later seek of the same partition wins over a time seek still looking up.
   * @example await consumer.seek('orders', 0, { time: new Date('2026-12-01T00:00:00Z') })
   */
  seek(topic: string, partition: number, offset: number): void
  seek(topic: string, partition: number, to: { time: number | Date }): Promise<void>
  seek(topic: string, partition: number, to: number | { time: number | Date }): void | Promise<void> {
    const key = partitionKey(topic, partition)
    const turn = (this.#seekTurns.get(key) ?? 0) + 1
    this.#seekTurns.set(key, turn)
    if (typeof to !== 'object' || to === null) return this.#commits.seek(topic, partition, to)
    return this.#seekTime(topic, partition, to, key, turn)
  }

  async #seekTime(topic: string, partition: number, to: object, key: string, turn: number): Promise<void> {
    const time = checkTime('seek() target time', (to as { time?: unknown }).time)
    if (!this.#core.topics.includes(topic))
      throw new InvalidArgumentError(
        `This consumer does not consume topic "${topic}" (it consumes ${this.#core.topics.join(', ')})`,
      )
    checkInt('seek() partition', partition, 0, Number.MAX_SAFE_INTEGER)
    const offset = await this.#core.backend.offsetForTime(topic, partition, time)
    if (this.#seekTurns.get(key) === turn) this.#commits.seek(topic, partition, offset)
  }

  /** Leave the group: stop fetching, wait for in-flight acks (up to `drainTimeoutMs`), commit, leave. Idempotent. */
  override close(): Promise<void> {
    return this.#core.close()
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close()
  }

  async #start(ends: Promise<Map<string, number[]>>): Promise<void> {
    const core = this.#core
    try {
      for (const [topic, e] of await ends) this.#ledger.endsAtCreation.set(topic, e)
      await core.retention.load(core.topics)
      if (core.state !== 'running') return
      this.#coordination.start() // watching creates the group's state: a store it cannot write fails the consumer
    } catch (e) {
      return core.fail(e)
    }
    this.#commits.startPeriodic()
    this.#updateRefs()
    this.#coordination.schedule()
    void fetchLoop(core, this.#reads)
  }

  /** Keep the process alive only while something iterates this consumer. */
  #updateRefs(): void {
    const keep = this.#core.keepAlive
    this.#coordination.rewatch()
    this.#commits.rewatch()
    for (const t of this.#ledger.redeliveries) keep ? t.ref() : t.unref()
    if (this.#core.state === 'running') this.#reads.rewatch()
  }

  #scheduleStep(): void {
    // Before the start the first step is not due yet (the start schedules it).
    void this.#started.then(() => this.#coordination.schedule())
  }

  /** `close()`: stop fetching, wait for in-flight acks (up to `drainTimeoutMs`), commit, leave. */
  async #shutdown(): Promise<void> {
    const core = this.#core
    const ledger = this.#ledger
    if (!core.beginShutdown()) return
    this.#member.leaving = true
    await core.endIterations()
    // Keep heartbeating (as a leaving member) while draining; the periodic commit stops now.
    this.#commits.stopPeriodic()
    this.#coordination.schedule()
    for (const t of ledger.redeliveries) clearTimeout(t)
    ledger.redeliveries.clear()
    ledger.forgetBuffered()
    await core.drain(() => [...ledger.parts.values()].every((p) => p.drained))
    this.#coordination.stopHeartbeat()
    await this.#coordination.idle()
    if (core.failure === undefined) {
      await this.#commits.commitParts().catch((e) => {
        if (!(e instanceof FencedError)) core.emitError(e)
      })
      await core.backend.groups.groupLeave(core.opts.group, this.#member.id).catch((e) => core.emitError(e))
    }
    const revoked = [...ledger.parts.values()].map((p) => ledger.dropPartition(p))
    this.#coordination.stopWatching()
    if (revoked.length) core.events.emit('revoked', revoked)
    core.finishShutdown()
  }
}
