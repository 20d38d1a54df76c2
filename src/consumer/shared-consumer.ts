import { randomBytes } from 'node:crypto'
import type { TopicPartition } from '../backends/assign.js'
import type { Backend } from '../backends/backend.js'
import type { EntryRef, SharedDelivery, SharedMember } from '../backends/shared.js'
import { FencedError, InvalidArgumentError, TwainError } from '../core/errors.js'
import type { Key, Message } from '../core/types.js'
import type { GroupMessage, Settler } from './group-message.js'
import { MemberCore, type ConsumerContext } from './member-core.js'
import type { ResolvedConsumerOptions } from './options.js'
import { entryList as refs, insertInOrder, ref, setState, sharedMessage, state, type SharedHandle, type SharedMessage } from './shared-message.js'

/** Retry delay of a re-delivery or dead-letter write that failed. */
const RETRY_MS = 1000

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
export class SharedConsumer<V = unknown, K extends Key = Key> extends MemberCore<V, SharedHandle, K> {
  /** The member's name in the group (its Redis consumer name): `name`, or a random one. */
  readonly name: string
  private member: SharedMember | undefined
  private parts: TopicPartition[] = []
  /** Messages held: fetched and not settled, lost or given back. */
  private outstanding = 0
  /** Handed to the application, not settled. */
  private inFlight = 0
  private pendingTerms = 0
  private readonly starting: Promise<void>
  private fetching: Promise<void> | undefined
  private readonly stopFetch = new AbortController()
  /** Aborted (and replaced) when demand ends: a read under way stops waiting. */
  private idleFetch = new AbortController()
  /** Nacked messages and their re-delivery timers. */
  private readonly waiting = new Map<SharedMessage<V>, NodeJS.Timeout | undefined>()
  private redeliverQueue: SharedMessage<V>[] = []
  private readonly redelivering = new Set<Promise<void>>()
  /** Entries lost to other members since the last `commit()` (reported by it as `FencedError`). */
  private readonly lostSinceCommit: EntryRef[] = []
  /** How its messages settle: kept out of the consumer's API. */
  readonly #settler: Settler<SharedHandle> = { ack: (m) => this.#ack(m), nack: (m, ms) => this.#nack(m, ms), term: (m, r) => this.#term(m, r), release: (m) => this.#release(m) }

  /** @internal Use `twain.consumer(topics, { mode: 'shared', … })`. */
  constructor(ctx: ConsumerContext, topics: string[], opts: ResolvedConsumerOptions, onClosed: (c: SharedConsumer<any>) => void) {
    if (!ctx.store.shared) throw new InvalidArgumentError(`mode 'shared' (competing consumers) needs the Redis backend; this store is ${ctx.store.kind}: use mode 'partitioned'`)
    super(ctx, topics, opts, onClosed as (c: unknown) => void)
    this.name = opts.name ?? `member-${randomBytes(5).toString('hex')}`
    this.starting = this.start()
  }

  /** This member's id in the group: its name (shared members are identified by name). */
  get memberId(): string {
    return this.name
  }

  private async start(): Promise<void> {
    let member: SharedMember
    try {
      await this.retention.load(this.topics)
      member = await (this.backend.shared as NonNullable<Backend['shared']>).join(
        {
          group: this.opts.group,
          name: this.name,
          topics: this.topics,
          from: this.opts.from,
          claimAfterMs: this.opts.claimAfterMs,
          ackIntervalMs: this.opts.commitIntervalMs,
          sessionTimeoutMs: this.opts.sessionTimeoutMs,
          heartbeatIntervalMs: this.opts.heartbeatIntervalMs,
        },
        {
          lost: (entries) => this.onLost(entries),
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

  /** Messages a view never emitted go back to the group, their delivery uncounted. */
  protected unread(items: GroupMessage<V>[]): void {
    for (const m of items) this.#release(m as SharedMessage<V>)
  }

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

  /** Give buffered (and, when leaving, waiting) messages back to the group: buffered ones uncounted. */
  private async handBack(waiting = false): Promise<void> {
    const member = this.member
    if (!member) return
    const buffered = this.buffer.filter((m) => state(m) === 'buffered')
    const nacked = waiting ? [...this.waiting.keys()].filter((m) => state(m) === 'waiting') : []
    this.buffer = this.buffer.filter((m) => state(m) !== 'buffered')
    for (const m of [...buffered, ...nacked]) this.drop(m, 'given')
    if (buffered.length) await member.giveBack(buffered.map(ref), false).catch((e) => this.emitError(e))
    if (nacked.length) await member.giveBack(nacked.map(ref), true).catch((e) => this.emitError(e))
  }

  protected async flushCommits(): Promise<void> {
    await this.member?.flush()
  }

  protected deliverable(m: SharedMessage<V>): boolean {
    return state(m) === 'buffered'
  }

  /** Redis counted this delivery when it read the entry: the deliveries made are one fewer. */
  protected deliveriesMade(m: SharedMessage<V>): number {
    return m.deliveryCount - 1
  }

  protected deliver(m: SharedMessage<V>): void {
    setState(m, 'delivered')
    this.inFlight++
  }

  // ---- settlement ---------------------------------------------------------------------

  /** A message leaves the delivered or waiting state (its count, its re-delivery timer). */
  private leave(m: SharedMessage<V>): void {
    if (state(m) === 'delivered') this.inFlight--
    if (state(m) !== 'waiting') return
    const t = this.waiting.get(m)
    if (t) clearTimeout(t)
    this.waiting.delete(m)
  }

  /** A held message stops being held (settled, lost or given back). */
  private drop(m: SharedMessage<V>, to: 'settled' | 'lost' | 'given'): void {
    this.leave(m)
    setState(m, to)
    this.outstanding--
    this.fetchWake.wake()
    this.settleWake.wake()
  }

  #ack(m: SharedMessage<unknown>): void {
    const s = state(m)
    if (s === 'settled' || s === 'lost' || s === 'given' || s === 'terming') return
    this.drop(m as SharedMessage<V>, 'settled')
    this.member?.ack(ref(m))
  }

  #nack(m: SharedMessage<unknown>, delayMs: number): void {
    if (state(m) !== 'delivered') return
    const msg = m as SharedMessage<V>
    this.inFlight--
    this.settleWake.wake()
    this.wait(msg, delayMs)
  }

  /** Re-deliver through the backend after `delayMs` (held meanwhile, so nobody claims it). */
  private wait(m: SharedMessage<V>, delayMs: number): void {
    setState(m, 'waiting')
    if (this.state !== 'running') return void this.waiting.set(m, undefined) // close() gives it back
    if (delayMs <= 0) {
      this.waiting.set(m, undefined)
      return this.queueRedelivery(m)
    }
    const t = setTimeout(() => {
      this.waiting.set(m, undefined)
      this.queueRedelivery(m)
    }, delayMs)
    if (this.views === 0) t.unref()
    this.waiting.set(m, t)
  }

  /** Re-deliveries asked for in one tick go as one call per partition. */
  private queueRedelivery(m: SharedMessage<V>): void {
    this.redeliverQueue.push(m)
    if (this.redeliverQueue.length > 1) return
    queueMicrotask(() => {
      const list = this.redeliverQueue.filter((x) => state(x) === 'waiting')
      this.redeliverQueue = []
      if (list.length === 0 || this.state !== 'running' || !this.member) return
      const run = this.redeliver(this.member, list)
      this.redelivering.add(run)
      void run.finally(() => this.redelivering.delete(run))
    })
  }

  private async redeliver(member: SharedMember, list: SharedMessage<V>[]): Promise<void> {
    let got: SharedDelivery[]
    try {
      got = await member.redeliver(list.map(ref))
    } catch (e) {
      this.emitError(e)
      for (const m of list) if (state(m) === 'waiting') this.wait(m, RETRY_MS)
      return
    }
    const counts = new Map(got.map((d) => [`${d.message.topic}/${d.message.partition}@${d.message.offset}`, d.deliveryCount]))
    for (const m of list) {
      if (state(m) !== 'waiting') continue
      const count = counts.get(`${m.topic}/${m.partition}@${m.offset}`)
      if (count === undefined) {
        this.drop(m, 'lost') // claimed by another member or trimmed (reported by the member)
        continue
      }
      this.waiting.delete(m)
      m.deliveryCount = count
      setState(m, 'buffered')
      this.buffer.push(m)
    }
    if (!this.demand) void this.handBack()
    this.wakeViews()
  }

  #release(m: SharedMessage<unknown>): void {
    if (state(m) !== 'delivered') return
    const msg = m as SharedMessage<V>
    this.inFlight--
    setState(msg, 'buffered')
    insertInOrder(this.buffer, msg)
    if (!this.demand) void this.handBack() // released after the last iteration ended
    this.wakeViews()
    this.settleWake.wake()
  }

  #term(m: SharedMessage<unknown>, reason: string): void {
    const s = state(m)
    if (s === 'settled' || s === 'lost' || s === 'given' || s === 'terming') return
    const msg = m as SharedMessage<V>
    if (!this.dlq) return this.#ack(msg)
    this.leave(msg)
    setState(msg, 'terming')
    this.pendingTerms++
    this.dlq.send(
      msg,
      reason,
      () => {
        this.pendingTerms--
        this.drop(msg, 'settled')
        this.member?.ack(ref(msg))
      },
      (e) => {
        this.pendingTerms--
        this.settleWake.wake()
        this.emitError(e)
        this.wait(msg, RETRY_MS)
      },
    )
  }

  /** Entries another member claimed from this one: buffered or waiting ones are dropped; acks of in-flight ones are ignored. */
  private onLost(entries: EntryRef[]): void {
    const keys = new Set(entries.map((e) => `${e.topic}/${e.partition}@${e.offset}`))
    const key = (m: SharedMessage<V>) => `${m.topic}/${m.partition}@${m.offset}`
    for (const m of this.buffer) if (state(m) === 'buffered' && keys.has(key(m))) this.drop(m, 'lost')
    for (const m of [...this.waiting.keys()]) if (keys.has(key(m))) this.drop(m, 'lost')
    this.lostSinceCommit.push(...entries)
    this.emitError(new FencedError(`Member "${this.name}" of shared group "${this.opts.group}" lost ${refs(entries)} to another member (it held them longer than claimAfterMs ${this.opts.claimAfterMs} ms without refreshing them): their acks are ignored`))
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
      for (let i = 0; i < got.length; i++) this.buffer.push(sharedMessage<V>(msgs[i] as Message, (got[i] as SharedDelivery).deliveryCount, this.#settler))
      this.outstanding += got.length
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
