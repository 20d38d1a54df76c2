import { randomBytes } from 'node:crypto'
import type { TopicPartition } from '../backends/assign.js'
import type { Backend } from '../backends/backend.js'
import type { SharedDelivery, SharedMember } from '../backends/shared.js'
import { FencedError, InvalidArgumentError, TwainError } from '../core/errors.js'
import type { Key, Message } from '../core/types.js'
import type { ConsumerContext } from './member-core.js'
import { SharedLedger } from './shared-ledger.js'
import type { ResolvedConsumerOptions } from './options.js'
import { endsAtCreation } from './ends-at-creation.js'
import { entryList as refs } from './shared-message.js'

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
 * Like a partitioned consumer, it is a membership and each `for await` is a view of it.
 */
export class SharedConsumer<V = unknown, K extends Key = Key> extends SharedLedger<V, K> {
  /** The member's name in the group (its Redis consumer name): `name`, or a random one. */
  readonly name: string
  private parts: TopicPartition[] = []
  private readonly starting: Promise<void>
  private fetching: Promise<void> | undefined
  private readonly stopFetch = new AbortController()
  /** Aborted (and replaced) when demand ends: a read under way stops waiting. */
  private idleFetch = new AbortController()

  /** @internal Use `twain.consumer(topics, { mode: 'shared', … })`. */
  constructor(ctx: ConsumerContext, topics: string[], opts: ResolvedConsumerOptions, onClosed: (c: SharedConsumer<any>) => void) {
    if (!ctx.store.shared) throw new InvalidArgumentError(`mode 'shared' (competing consumers) needs the Redis backend; this store is ${ctx.store.kind}: use mode 'partitioned'`)
    super(ctx, topics, opts, onClosed as (c: unknown) => void)
    this.name = opts.name ?? `member-${randomBytes(5).toString('hex')}`
    this.starting = this.start(endsAtCreation(this.backend, topics, opts.from))
  }

  /** This member's id in the group: its name (shared members are identified by name). */
  get memberId(): string {
    return this.name
  }

  private async start(endsAsked: Promise<Map<string, number[]>>): Promise<void> {
    let member: SharedMember
    try {
      const ends = await endsAsked
      await this.retention.load(this.topics)
      member = await (this.backend.shared as NonNullable<Backend['shared']>).join(
        {
          group: this.opts.group,
          name: this.name,
          topics: this.topics,
          from: this.opts.from,
          ends,
          claimAfterMs: this.opts.claimAfterMs,
          ackIntervalMs: this.opts.commitIntervalMs,
          sessionTimeoutMs: this.opts.sessionTimeoutMs,
          heartbeatIntervalMs: this.opts.heartbeatIntervalMs,
        },
        {
          lost: (entries) => this.onLost(entries),
          rolledBack: (rollback, entries) => this.onRolledBack(rollback, entries),
          trimmed: (entries) =>
            this.emitError(
              new TwainError(`Entries ${refs(entries)} of shared group "${this.opts.group}" were trimmed from their partition while pending: acknowledged, not delivered`, { code: 'ERR_ENTRY_TRIMMED' }),
            ),
          committed: (offsets) => {
            this.events.emit('commit', offsets)
            this.retention.committed()
          },
          error: (e) => this.emitError(e),
          fenced: (e) => this.fail(e),
        },
      )
    } catch (e) {
      return this.fail(e)
    }
    this.member = member
    if (this.state !== 'running') return // closed while joining: shutdown() leaves
    member.setPersistent(this.views > 0)
    this.parts = [...member.partitions]
    this.events.emit('assigned', this.assignments())
    this.fetching = this.fetchLoop(member)
  }

  // ---- views (iterations) ---------------------------------------------------------------

  /** Keep the process alive only while something iterates this consumer. */
  protected updateRefs(): void {
    const keep = this.views > 0
    for (const t of this.waiting.values()) if (t) keep ? t.ref() : t.unref()
    if (this.state === 'running') this.member?.setPersistent(keep)
  }

  /**
   * Reads start with the first iteration or poll. When the last iteration ends (and nothing polls),
   * reading stops and what was fetched and not handed out goes back to the group at once, its
   * delivery uncounted, so live members can take it: an idle member holds only what it handed out.
   */
  protected demandChanged(): void {
    if (this.demand) return this.fetchWake.wake()
    this.idleFetch.abort()
    this.idleFetch = new AbortController()
    this.member?.pause()
    void this.handBack()
  }

  // ---- fetching -----------------------------------------------------------------------

  private async fetchLoop(member: SharedMember): Promise<void> {
    const max = this.opts.maxInFlight
    // Hysteresis: refill once a quarter of maxInFlight is free, not one message per ack.
    const lowWater = Math.max(1, Math.floor(max / 4))
    let failures = 0
    while (this.state === 'running') {
      this.fetchWake.take()
      const room = max - this.outstanding
      if (room < lowWater || !this.demand) {
        await this.fetchWake.next()
        continue
      }
      let got: SharedDelivery[]
      try {
        got = await member.fetch(room, AbortSignal.any([this.stopFetch.signal, this.idleFetch.signal]))
        failures = 0
      } catch (e) {
        if (this.state !== 'running') break
        this.emitError(e)
        failures++
        await this.pause(Math.min(50 * 2 ** failures, 2000))
        continue
      }
      if (got.length === 0) continue
      let msgs = got.map((d) => d.message)
      if (this.decode) {
        try {
          msgs = await this.decode(msgs)
        } catch (e) {
          this.emitError(e)
        }
      }
      for (let i = 0; i < got.length; i++) this.buffered(msgs[i] as Message, (got[i] as SharedDelivery).deliveryCount)
      if (!this.demand) void this.handBack() // the last iteration ended during the read
      this.wakeViews()
    }
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const signal = this.stopFetch.signal
      const done = () => {
        clearTimeout(t)
        signal.removeEventListener('abort', done)
        resolve()
      }
      const t = setTimeout(done, ms)
      if (this.views === 0) t.unref()
      signal.addEventListener('abort', done, { once: true })
    })
  }

  // ---- group ----------------------------------------------------------------------------

  /**
   * Send the waiting acknowledgements now. Rejects with `FencedError` when messages were claimed by
   * another member since the last `commit()` (their acks were ignored).
   */
  async commit(): Promise<void> {
    await this.starting
    const lost = this.lostSinceCommit.splice(0)
    await this.member?.flush()
    if (lost.length) {
      throw new FencedError(`Messages ${refs(lost)} of shared group "${this.opts.group}" were claimed from member "${this.name}" by another member (held longer than claimAfterMs without refreshing): their acks were not applied`)
    }
  }

  /** Every partition of this member's topics (each member reads all of them), once joined. */
  assignments(): TopicPartition[] {
    return this.state === 'closed' ? [] : this.parts.map((tp) => ({ topic: tp.topic, partition: tp.partition }))
  }

  /** Join (if not yet done), refresh what this member holds and look for claimable entries now. */
  async rebalance(): Promise<void> {
    await this.starting
    if (this.state !== 'running' || !this.member) return
    await this.member.refresh()
    this.fetchWake.wake()
  }

  /** Not available in shared mode: Redis keeps one read position for the whole group. */
  seek(topic: string, partition: number, offset: number): void {
    throw new InvalidArgumentError(
      `seek(${JSON.stringify(topic)}, ${partition}, ${offset}) does not apply to mode 'shared': the group has one read position per partition, shared by its members; use twain.resetGroup() while no member is live`,
    )
  }

  /**
   * `close()`: stop reading at once, hand unprocessed messages back to the group, wait for
   * in-flight ones (up to `drainTimeoutMs`), flush acknowledgements, and delete the member where it
   * holds nothing. (`close()` runs it once.)
   */
  protected async shutdown(): Promise<void> {
    if (!this.beginShutdown()) return
    this.member?.stop() // a blocked read ends now
    this.stopFetch.abort()
    await this.endIterations()
    await this.starting
    const member = this.member
    member?.stop()
    await this.fetching
    await Promise.allSettled([...this.redelivering])
    if (member) {
      // Unprocessed messages go back to the group at once (buffered ones uncounted).
      await this.handBack(true)
      this.buffer = []
      await this.drain(() => this.inFlight === 0 && this.pendingTerms === 0)
      await member.leave()
    }
    if (this.parts.length) this.events.emit('revoked', this.assignments())
    this.finishShutdown()
  }

}
