import { randomBytes } from 'node:crypto'
import { hostname } from 'node:os'
import type { TopicPartition } from '../backends/assign.js'
import type { MemberSpec } from '../backends/group.js'
import { FencedError } from '../core/errors.js'
import type { Key } from '../core/types.js'
import type { ConsumerContext } from './member-core.js'
import type { ResolvedConsumerOptions } from './options.js'
import { endsAtCreation } from './ends-at-creation.js'
import { Commits, type CommitHost } from './partitioned/commits.js'
import { Coordination, type CoordinationHost } from './partitioned/coordination.js'
import { FetchLoop, type FetchHost } from './partitioned/fetch-loop.js'
import { PartitionedLedger } from './partitioned/ledger.js'

/**
 * A member of a consumer group (partitioned mode). It is a `MessageStream` of `GroupMessage`s:
 * every `for await` or subscription is a view of the one membership, and ending a view leaves the
 * member in the group. Only `close()`, `twain.close()` or the `signal` leave.
 *
 * The class wires the mode's parts (`partitioned/`): its ledger (the base class: owned partitions,
 * settlement), the coordination (membership steps), the commits and the fetch loop.
 */
export class Consumer<V = unknown, K extends Key = Key> extends PartitionedLedger<V, K> {
  readonly #member: MemberSpec
  readonly #commits: Commits
  readonly #fetch: FetchLoop
  readonly #coordination: Coordination

  /** @internal Use `twain.consumer()`. */
  constructor(ctx: ConsumerContext, topics: string[], opts: ResolvedConsumerOptions, onClosed: (c: Consumer<any>) => void) {
    super(ctx, topics, opts, onClosed as (c: unknown) => void)
    const id = `${opts.name ?? 'member'}-${randomBytes(5).toString('hex')}`
    this.#member = { id, name: opts.name ?? id, topics: [...topics].sort(), sessionTimeoutMs: opts.sessionTimeoutMs, pid: process.pid, host: hostname() }
    const host: CommitHost & FetchHost & CoordinationHost = {
      backend: this.backend,
      opts,
      member: this.#member,
      topics,
      parts: this.parts,
      events: this.events,
      fetchWake: this.fetchWake,
      retention: this.retention,
      pendingSeeks: this.pendingSeeks,
      decode: this.decode,
      state: () => this.state,
      failed: () => this.failed,
      fail: (e) => this.fail(e),
      keepAlive: () => this.views > 0,
      demand: () => this.demand,
      outstanding: () => this.outstanding,
      emitError: (e) => this.emitError(e),
      dropPartition: (p) => this.dropPartition(p),
      forgetBuffered: (p) => this.forgetBuffered(p),
      restart: (p, offset) => this.restart(p, offset),
      acquire: (lease, offsets) => this.acquire(lease, offsets),
      messageFactory: (p) => this.messageFactory(p),
      buffered: (msgs, p) => this.buffered(msgs, p),
      wakeViews: () => this.wakeViews(),
    }
    this.#commits = new Commits(host)
    this.#fetch = new FetchLoop(host)
    this.#coordination = new Coordination(host, this.#commits, this.#fetch)
    this.#started = this.start(endsAtCreation(this.backend, topics, opts.from))
  }

  /** Settles when the member has started (its first coordination step scheduled) or failed to. */
  readonly #started: Promise<void>

  /** This member's id in the group. */
  get memberId(): string {
    return this.#member.id
  }

  private async start(ends: Promise<Map<string, number[]>>): Promise<void> {
    try {
      for (const [topic, e] of await ends) this.endsAtCreation.set(topic, e)
      await this.retention.load(this.topics)
      if (this.state !== 'running') return
      this.#coordination.start() // watching creates the group's state: a store it cannot write fails the consumer
    } catch (e) {
      return this.fail(e)
    }
    this.#commits.startPeriodic()
    this.updateRefs()
    this.#coordination.schedule()
    void this.#fetch.run()
  }

  /** Keep the process alive only while something iterates this consumer. */
  protected updateRefs(): void {
    const keep = this.views > 0
    this.#coordination.rewatch()
    this.#commits.rewatch()
    for (const t of this.redeliveries) keep ? t.ref() : t.unref()
    if (this.state === 'running') this.#fetch.rewatch()
  }

  /** Reads start with the first iteration or poll; a member without one keeps its buffer and reads no more. */
  protected demandChanged(): void {
    if (this.demand) this.fetchWake.wake()
  }

  protected scheduleStep(): void {
    // Before the start the first step is not due yet (the start schedules it).
    void this.#started.then(() => this.#coordination.schedule())
  }

  protected flushCommits(): Promise<void> {
    return this.#commits.commitParts()
  }

  /** The partitions this member owns now. */
  assignments(): TopicPartition[] {
    return [...this.parts.values()].filter((p) => !p.lost).map((p) => ({ topic: p.topic, partition: p.partition }))
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

  /** Continue a partition from `offset` (applied when the partition is acquired if it is not owned now). */
  seek(topic: string, partition: number, offset: number): void {
    this.#commits.seek(topic, partition, offset)
  }

  /** `close()`: stop fetching, wait for in-flight acks (up to `drainTimeoutMs`), commit, leave. */
  protected async shutdown(): Promise<void> {
    if (!this.beginShutdown()) return
    this.#member.leaving = true
    await this.endIterations()
    // Keep heartbeating (as a leaving member) while draining; the periodic commit stops now.
    this.#commits.stopPeriodic()
    this.#coordination.schedule()
    for (const t of this.redeliveries) clearTimeout(t)
    this.redeliveries.clear()
    this.forgetBuffered()
    await this.drain(() => [...this.parts.values()].every((p) => p.drained))
    this.#coordination.stopHeartbeat()
    await this.#coordination.idle()
    if (this.failure === undefined) {
      await this.#commits.commitParts().catch((e) => {
        if (!(e instanceof FencedError)) this.emitError(e)
      })
      await this.backend.groups.groupLeave(this.opts.group, this.#member.id).catch((e) => this.emitError(e))
    }
    const revoked = [...this.parts.values()].map((p) => this.dropPartition(p))
    this.#coordination.stopWatching()
    if (revoked.length) this.events.emit('revoked', revoked)
    this.finishShutdown()
  }
}
