import type { EntryRef, SharedDelivery, SharedMember } from '../backends/shared.js'
import { FencedError } from '../core/errors.js'
import type { Key, Message } from '../core/types.js'
import type { GroupMessage, Settler } from './group-message.js'
import { MemberCore } from './member-core.js'
import { entryList as refs, ref, setState, sharedMessage, state, type SharedHandle, type SharedMessage } from './shared-message.js'

/** Retry delay of a re-delivery or dead-letter write that failed. */
const RETRY_MS = 1000

/**
 * The shared mode's ledger, under its consumer (`SharedConsumer`: joining, the fetch loop, the
 * group calls): what the member holds (`outstanding`, bounded by `maxInFlight`), each message's
 * state (shared-message.ts), how messages are handed out, settle, wait for re-delivery and go
 * back to the group, and what another member claimed from it.
 */
export abstract class SharedLedger<V = unknown, K extends Key = Key> extends MemberCore<V, SharedHandle, K> {
  /** The member's name in the group (its Redis consumer name). */
  abstract readonly name: string
  /** The backend's member, once joined. */
  protected member: SharedMember | undefined
  /** Messages held: fetched and not settled, lost or given back. */
  protected outstanding = 0
  /** Handed to the application, not settled. */
  protected inFlight = 0
  /** Dead-letter writes under way. */
  protected pendingTerms = 0
  /** Nacked messages and their re-delivery timers. */
  protected readonly waiting = new Map<SharedMessage<V>, NodeJS.Timeout | undefined>()
  protected redeliverQueue: SharedMessage<V>[] = []
  protected readonly redelivering = new Set<Promise<void>>()
  /** Entries lost to other members since the last `commit()` (reported by it as `FencedError`). */
  protected readonly lostSinceCommit: EntryRef[] = []
  /** How its messages settle: kept out of the consumer's API. */
  readonly #settler: Settler<SharedHandle> = { ack: (m) => this.#ack(m), nack: (m, ms) => this.#nack(m, ms), term: (m, r) => this.#term(m, r), release: (m) => this.#release(m) }

  /** A fetched message (Redis's `deliveryCount`), held and buffered. */
  protected buffered(m: Message, deliveryCount: number): void {
    this.buffer.push(sharedMessage<V>(m, deliveryCount, this.#settler))
    this.outstanding++
  }

  /** Messages a view never emitted go back to the group, their delivery uncounted. */
  protected unread(items: GroupMessage<V>[]): void {
    for (const m of items) this.#release(m as SharedMessage<V>)
  }

  /** Give buffered (and, when leaving, waiting) messages back to the group: buffered ones uncounted. */
  protected async handBack(waiting = false): Promise<void> {
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
  protected leave(m: SharedMessage<V>): void {
    if (state(m) === 'delivered') this.inFlight--
    if (state(m) !== 'waiting') return
    const t = this.waiting.get(m)
    if (t) clearTimeout(t)
    this.waiting.delete(m)
  }

  /** A held message stops being held (settled, lost or given back). */
  protected drop(m: SharedMessage<V>, to: 'settled' | 'lost' | 'given'): void {
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
  protected wait(m: SharedMessage<V>, delayMs: number): void {
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
  protected queueRedelivery(m: SharedMessage<V>): void {
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

  protected async redeliver(member: SharedMember, list: SharedMessage<V>[]): Promise<void> {
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
    this.putBack(msg)
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
  protected onLost(entries: EntryRef[]): void {
    this.dropHeld(entries)
    this.lostSinceCommit.push(...entries)
    this.emitError(new FencedError(`Member "${this.name}" of shared group "${this.opts.group}" lost ${refs(entries)} to another member (it held them longer than claimAfterMs ${this.opts.claimAfterMs} ms without refreshing them): their acks are ignored`))
  }

  /** The log moved back (decision 112): the messages of `entries` are void, the records now there come as new ones. */
  protected onRolledBack(rollback: Error, entries: EntryRef[]): void {
    this.dropHeld(entries)
    this.emitError(rollback)
  }

  private dropHeld(entries: EntryRef[]): void {
    const keys = new Set(entries.map((e) => `${e.topic}/${e.partition}@${e.offset}`))
    const key = (m: SharedMessage<V>) => `${m.topic}/${m.partition}@${m.offset}`
    for (const m of this.buffer) if (state(m) === 'buffered' && keys.has(key(m))) this.drop(m, 'lost')
    for (const m of [...this.waiting.keys()]) if (keys.has(key(m))) this.drop(m, 'lost')
  }
}
