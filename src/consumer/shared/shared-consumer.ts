import { randomBytes } from 'node:crypto'
import type { TopicPartition } from '../../backends/assign.js'
import type { Backend } from '../../backends/backend.js'
import type { SharedMember } from '../../backends/shared.js'
import { FencedError, InvalidArgumentError, TwainError } from '../../core/errors.js'
import type { Key } from '../../core/types.js'
import { MessageStream, type StreamControl } from '../../stream/message-stream.js'
import { endsAtCreation } from '../ends-at-creation.js'
import type { ConsumerEventMap } from '../events.js'
import { fetchLoop } from '../fetch-loop.js'
import type { GroupMessage } from '../group-message.js'
import { MemberCore, type ConsumerContext } from '../member-core.js'
import type { ResolvedConsumerOptions } from '../options.js'
import { SharedLedger, type SharedCore } from './ledger.js'
import { entryList as refs, type SharedHandle } from './shared-message.js'
import { SharedReads } from './shared-reads.js'

/**
 * A member of a shared group (`mode: 'shared'`, README "Shared groups"): competing consumers over every
 * partition of its topics, with per-message acknowledgement, through the backend's
 * {@link SharedGroups} capability (Redis consumer groups). Same surface as the partitioned
 * {@link Consumer}: a `MessageStream` of `GroupMessage`s with `poll`/`pollMany`/`commit`/
 * `assignments`/`rebalance`/`on`/`close`; `seek` does not apply.
 *
 * - Each message is delivered to one member at a time; `ack()` acknowledges it (batched); `nack()`
 *   re-delivers it through the backend after `delayMs` (Redis counts the delivery); `term()` sends it
 *   to `deadLetter` and acknowledges it; `release()` hands it back uncounted.
 * - `deliveryCount` is Redis's count; a message delivered more than `maxDeliveries` times is termed.
 * - A member restarted under the same `name` first gets what it held and never acknowledged; entries
 *   idle longer than `claimAfterMs` (their member died) are claimed by live members.
 * - `commit()` sends the waiting acknowledgements now; `close()` stops reading at once, hands
 *   unprocessed messages back to the group, waits for in-flight ones (up to `drainTimeoutMs`),
 *   flushes, and leaves.
 *
 * Like a partitioned consumer, it is a membership and each `for await` is a view of it. The class
 * wires its private parts: the member core, this mode's ledger and, once joined, the reads its
 * fetch loop runs.
 */
export class SharedConsumer<V = unknown, K extends Key = Key>
  extends MessageStream<GroupMessage<V, K>>
  implements AsyncDisposable
{
  /** The member's name in the group (its Redis consumer name): `name`, or a random one. */
  readonly name: string
  readonly #core: SharedCore<V>
  readonly #ledger: SharedLedger<V>
  #parts: TopicPartition[] = []
  readonly #starting: Promise<void>
  /** The reads, once joined. */
  #reads: SharedReads<V> | undefined
  #fetching: Promise<void> | undefined

  /** @internal Use `twain.consumer(topics, { mode: 'shared', … })`. */
  constructor(
    ctx: ConsumerContext,
    topics: string[],
    opts: ResolvedConsumerOptions,
    onClosed: (c: SharedConsumer<any>) => void,
  ) {
    if (!ctx.store.shared)
      throw new InvalidArgumentError(
        `mode 'shared' (competing consumers) needs the Redis backend; this store is ${ctx.store.kind}: use mode 'partitioned'`,
      )
    let stream!: StreamControl
    super(
      { open: () => this.#core.open(), afterClose: () => this.#core.afterClose(), attach: (c) => (stream = c) },
      opts.signal,
      ctx.iterations,
    )
    const name = opts.name ?? `member-${randomBytes(5).toString('hex')}`
    this.name = name
    this.#core = new MemberCore<V, SharedHandle, SharedLedger<V>>(ctx, topics, opts, {
      memberId: name,
      stream,
      life: {
        keepAliveChanged: () => this.#updateRefs(),
        demandChanged: () => this.#demandChanged(),
        flushCommits: () => this.#ledger.flushCommits(),
        shutdown: () => this.#shutdown(),
      },
      ledger: (core) => new SharedLedger<V>(core, name),
      onClosed: () => onClosed(this),
    })
    this.#ledger = this.#core.ledger
    this.#starting = this.#start(endsAtCreation(ctx.store, topics, opts.from))
  }

  /** The topics this member consumes. */
  get topics(): string[] {
    return this.#core.topics
  }

  /** The group this member belongs to. */
  get group(): string {
    return this.#core.opts.group
  }

  /** This member's id in the group: its name (shared members are identified by name). */
  get memberId(): string {
    return this.name
  }

  /**
   * Next buffered message, without waiting (TwainMQ's `poll`). The first call starts reading ahead
   * (up to `maxInFlight`), so it usually returns `undefined`; later calls get what arrived.
   */
  poll(): GroupMessage<V, K> | undefined {
    return this.pollMany(1)[0]
  }

  /** Up to `n` buffered messages, without waiting (the first call starts reading ahead, as `poll()`). */
  pollMany(n = 10): GroupMessage<V, K>[] {
    return this.#core.views.poll(n)
  }

  on<E extends keyof ConsumerEventMap>(event: E, listener: (payload: ConsumerEventMap[E]) => void): () => void {
    return this.#core.events.on(event, listener)
  }

  /** Like {@link on}, for the next event only; returns a function that removes the listener if it has not run. */
  once<E extends keyof ConsumerEventMap>(event: E, listener: (payload: ConsumerEventMap[E]) => void): () => void {
    return this.#core.events.once(event, listener)
  }

  /**
   * Send the waiting acknowledgements now. Rejects with `FencedError` when messages were claimed by
   * another member since the last `commit()` (their acks were ignored).
   */
  async commit(): Promise<void> {
    await this.#starting
    const ledger = this.#ledger
    const lost = ledger.lostSinceCommit.splice(0)
    await ledger.member?.flush()
    if (lost.length) {
      throw new FencedError(
        `Messages ${refs(lost)} of shared group "${this.group}" were claimed from member "${this.name}" by another member (held longer than claimAfterMs without refreshing): their acks were not applied`,
      )
    }
  }

  /** Every partition of this member's topics (each member reads all of them), once joined. */
  assignments(): TopicPartition[] {
    return this.#core.state === 'closed' ? [] : this.#parts.map((tp) => ({ topic: tp.topic, partition: tp.partition }))
  }

  /** Join (if not yet done), refresh what this member holds and look for claimable entries now. */
  async rebalance(): Promise<void> {
    await this.#starting
    const member = this.#ledger.member
    if (this.#core.state !== 'running' || !member) return
    await member.refresh()
    this.#core.fetchWake.wake()
  }

  /** Not available in shared mode: Redis keeps one read position for the whole group. */
  seek(topic: string, partition: number, offset: number): void
  seek(topic: string, partition: number, to: { time: number | Date }): Promise<void>
  seek(topic: string, partition: number, to: number | { time: number | Date }): void | Promise<void> {
    const shown = typeof to === 'object' && to !== null ? JSON.stringify(to) : String(to)
    const e = new InvalidArgumentError(
      `seek(${JSON.stringify(topic)}, ${partition}, ${shown}) does not apply to mode 'shared': the group has one read position per partition, shared by its members; use twain.resetGroup() while no member is live`,
    )
    if (typeof to === 'object' && to !== null) return Promise.reject(e)
    throw e
  }

  /**
   * Leave the group: stop reading at once, hand unprocessed messages back to the group, wait for
   * in-flight ones (up to `drainTimeoutMs`), flush acknowledgements, and delete the member where it
   * holds nothing. Idempotent.
   */
  override close(): Promise<void> {
    return this.#core.close()
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close()
  }

  async #start(endsAsked: Promise<Map<string, number[]>>): Promise<void> {
    const core = this.#core
    const ledger = this.#ledger
    const opts = core.opts
    let member: SharedMember
    try {
      const ends = await endsAsked
      await core.retention.load(core.topics)
      member = await (core.backend.shared as NonNullable<Backend['shared']>).join(
        {
          group: opts.group,
          name: this.name,
          topics: core.topics,
          from: opts.from,
          ends,
          claimAfterMs: opts.claimAfterMs,
          ackIntervalMs: opts.commitIntervalMs,
          sessionTimeoutMs: opts.sessionTimeoutMs,
          heartbeatIntervalMs: opts.heartbeatIntervalMs,
        },
        {
          lost: (entries) => ledger.onLost(entries),
          rolledBack: (rollback, entries) => ledger.onRolledBack(rollback, entries),
          // Entries of a compacted topic go while pending by design (a newer record of their key came):
          // only the others are reported.
          trimmed: (entries) =>
            void notCompacted(core.backend, entries).then((rest) => {
              if (rest.length > 0)
                core.emitError(
                  new TwainError(
                    `Entries ${refs(rest)} of shared group "${opts.group}" were trimmed from their partition while pending: acknowledged, not delivered`,
                    { code: 'ERR_ENTRY_TRIMMED' },
                  ),
                )
            }),
          committed: (offsets) => {
            core.events.emit('commit', offsets)
            core.retention.committed()
          },
          error: (e) => core.emitError(e),
          fenced: (e) => core.fail(e),
        },
      )
    } catch (e) {
      return core.fail(e)
    }
    ledger.member = member
    if (core.state !== 'running') return // closed while joining: the shutdown leaves
    member.setPersistent(core.keepAlive)
    this.#parts = [...member.partitions]
    core.events.emit('assigned', this.assignments())
    this.#reads = new SharedReads(ledger, member)
    this.#fetching = fetchLoop(core, this.#reads)
  }

  /** Keep the process alive only while something iterates this consumer. */
  #updateRefs(): void {
    const core = this.#core
    const keep = core.keepAlive
    for (const t of this.#ledger.waiting.values()) if (t) keep ? t.ref() : t.unref()
    if (core.state === 'running') this.#ledger.member?.setPersistent(keep)
  }

  /**
   * Reads start with the first iteration or poll. When the last iteration ends (and nothing polls),
   * reading stops and what was fetched and not handed out goes back to the group at once, its
   * delivery uncounted, so live members can take it: an idle member holds only what it handed out.
   */
  #demandChanged(): void {
    const core = this.#core
    if (core.demand) return core.fetchWake.wake()
    this.#reads?.idle()
    this.#ledger.member?.pause()
    void this.#ledger.handBack()
  }

  /** `close()`: stop reading at once, hand unprocessed messages back, drain, flush, leave. */
  async #shutdown(): Promise<void> {
    const core = this.#core
    const ledger = this.#ledger
    if (!core.beginShutdown()) return
    ledger.member?.stop() // a blocked read ends now
    this.#reads?.stop()
    await core.endIterations()
    await this.#starting
    const member = ledger.member
    member?.stop()
    await this.#fetching
    await Promise.allSettled([...ledger.redelivering])
    if (member) {
      // Unprocessed messages go back to the group at once (buffered ones uncounted).
      await ledger.handBack(true)
      core.buffer = []
      await core.drain(() => ledger.inFlight === 0 && ledger.pendingTerms === 0)
      await member.leave()
    }
    if (this.#parts.length) core.events.emit('revoked', this.assignments())
    core.finishShutdown()
  }
}

/** The entries not of a compacted topic (a topic that cannot be read counts as not compacted). */
async function notCompacted<E extends { topic: string }>(backend: Backend, entries: readonly E[]): Promise<E[]> {
  const compacted = new Map<string, boolean>()
  for (const t of new Set(entries.map((e) => e.topic)))
    compacted.set(
      t,
      await backend.getTopic(t).then(
        (m) => m.compact === true,
        () => false,
      ),
    )
  return entries.filter((e) => compacted.get(e.topic) !== true)
}
