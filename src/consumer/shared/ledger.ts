import type { EntryRef, SharedDelivery, SharedMember } from '../../backends/shared.js'
import { FencedError } from '../../core/errors.js'
import type { Message } from '../../core/types.js'
import { refillAt } from '../fetch-loop.js'
import type { Settler } from '../group-message.js'
import type { MemberCore, MemberLedger } from '../member-core.js'
import {
  entryList as refs,
  ref,
  setState,
  sharedMessage,
  state,
  type SharedHandle,
  type SharedMessage,
} from './shared-message.js'

/** The member core of a shared member. */
export type SharedCore<V> = MemberCore<V, SharedHandle, SharedLedger<V>>

/** Retry delay of a re-delivery or dead-letter write that failed. */
const RETRY_MS = 1000

/**
 * The shared mode's ledger (what the member core asks of a mode, `MemberLedger`), beside its
 * member core in `SharedConsumer` (which joins, runs the fetch loop over `SharedReads` and makes
 * the group calls): what the member holds (`outstanding`, bounded by `maxInFlight`), each
 * message's state (shared-message.ts), how messages are handed out, settle, wait for re-delivery
 * and go back to the group, and what another member claimed from it.
 */
export class SharedLedger<V = unknown> implements MemberLedger<V, SharedHandle> {
  /** The backend's member, once joined. */
  member: SharedMember | undefined
  /** Messages held: fetched and not settled, lost or given back. */
  outstanding = 0
  /** Handed to the application, not settled. */
  inFlight = 0
  /** Dead-letter writes under way. */
  pendingTerms = 0
  /** Nacked messages and their re-delivery timers. */
  readonly waiting = new Map<SharedMessage<V>, NodeJS.Timeout | undefined>()
  private redeliverQueue: SharedMessage<V>[] = []
  readonly redelivering = new Set<Promise<void>>()
  /** Entries lost to other members since the last `commit()` (reported by it as `FencedError`). */
  readonly lostSinceCommit: EntryRef[] = []
  /** How its messages settle: kept out of the consumer's API. */
  readonly #settler: Settler<SharedHandle> = {
    ack: (m) => this.#ack(m),
    nack: (m, ms) => this.#nack(m, ms),
    term: (m, r) => this.#term(m, r),
    release: (m) => this.#release(m),
  }
  readonly #maxInFlight: number
  /** Room (`maxInFlight` less outstanding) from which a settlement wakes the fetch loop (the refill rule). */
  readonly #refill: number

  constructor(
    /** The member core this ledger records in (buffer, wakes, state, dead letters). */
    readonly core: SharedCore<V>,
    /** The member's name in the group (its Redis consumer name). */
    readonly name: string,
  ) {
    this.#maxInFlight = core.opts.maxInFlight
    this.#refill = refillAt(this.#maxInFlight)
  }

  /** A fetched message (Redis's `deliveryCount`), held and buffered. */
  buffered(m: Message, deliveryCount: number): void {
    this.core.buffer.push(sharedMessage<V>(m, deliveryCount, this.#settler))
    this.outstanding++
  }

  /** Messages a view never emitted go back to the group, their delivery uncounted. */
  unread(items: SharedMessage<V>[]): void {
    for (const m of items) this.#release(m)
  }

  /** Give buffered (and, when leaving, waiting) messages back to the group: buffered ones uncounted. */
  async handBack(waiting = false): Promise<void> {
    const member = this.member
    if (!member) return
    const buffered = this.core.buffer.filter((m) => state(m) === 'buffered')
    const nacked = waiting ? [...this.waiting.keys()].filter((m) => state(m) === 'waiting') : []
    this.core.buffer = this.core.buffer.filter((m) => state(m) !== 'buffered')
    for (const m of [...buffered, ...nacked]) this.drop(m, 'given')
    if (buffered.length) await member.giveBack(buffered.map(ref), false).catch((e) => this.core.emitError(e))
    if (nacked.length) await member.giveBack(nacked.map(ref), true).catch((e) => this.core.emitError(e))
  }

  /** Send the waiting acknowledgements now. */
  async flushCommits(): Promise<void> {
    await this.member?.flush()
  }

  /** No fast path: every buffered message's state is looked at. */
  deliverPrefix(): number {
    return 0
  }

  deliverable(m: SharedMessage<V>): boolean {
    return state(m) === 'buffered'
  }

  /** Redis counted this delivery when it read the entry: the deliveries made are one fewer. */
  deliveriesMade(m: SharedMessage<V>): number {
    return m.deliveryCount - 1
  }

  deliver(m: SharedMessage<V>): void {
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
    // The fetch loop reads nothing until the refill mark is free: waking it on every ack only spins it.
    if (this.#maxInFlight - --this.outstanding >= this.#refill) this.core.fetchWake.wake()
    this.core.settleWake.wake()
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
    this.core.settleWake.wake()
    this.wait(msg, delayMs)
  }

  /** Re-deliver through the backend after `delayMs` (held meanwhile, so nobody claims it). */
  private wait(m: SharedMessage<V>, delayMs: number): void {
    setState(m, 'waiting')
    if (this.core.state !== 'running') return void this.waiting.set(m, undefined) // close() gives it back
    if (delayMs <= 0) {
      this.waiting.set(m, undefined)
      return this.queueRedelivery(m)
    }
    const t = setTimeout(() => {
      this.waiting.set(m, undefined)
      this.queueRedelivery(m)
    }, delayMs)
    if (!this.core.keepAlive) t.unref()
    this.waiting.set(m, t)
  }

  /** Re-deliveries asked for in one tick go as one call per partition. */
  private queueRedelivery(m: SharedMessage<V>): void {
    this.redeliverQueue.push(m)
    if (this.redeliverQueue.length > 1) return
    queueMicrotask(() => {
      const list = this.redeliverQueue.filter((x) => state(x) === 'waiting')
      this.redeliverQueue = []
      if (list.length === 0 || this.core.state !== 'running' || !this.member) return
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
      this.core.emitError(e)
      for (const m of list) if (state(m) === 'waiting') this.wait(m, RETRY_MS)
      return
    }
    const counts = new Map(
      got.map((d) => [`${d.message.topic}/${d.message.partition}@${d.message.offset}`, d.deliveryCount]),
    )
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
      this.core.buffer.push(m)
    }
    if (!this.core.demand) void this.handBack()
    this.core.wakeViews()
  }

  #release(m: SharedMessage<unknown>): void {
    if (state(m) !== 'delivered') return
    const msg = m as SharedMessage<V>
    this.inFlight--
    setState(msg, 'buffered')
    this.core.putBack(msg)
    if (!this.core.demand) void this.handBack() // released after the last iteration ended
    this.core.wakeViews()
    this.core.settleWake.wake()
  }

  #term(m: SharedMessage<unknown>, reason: string): void {
    const s = state(m)
    if (s === 'settled' || s === 'lost' || s === 'given' || s === 'terming') return
    const msg = m as SharedMessage<V>
    if (!this.core.dlq) return this.#ack(msg)
    this.leave(msg)
    setState(msg, 'terming')
    this.pendingTerms++
    this.core.dlq.send(
      msg,
      reason,
      () => {
        this.pendingTerms--
        this.drop(msg, 'settled')
        this.member?.ack(ref(msg))
      },
      (e) => {
        this.pendingTerms--
        this.core.settleWake.wake()
        this.core.emitError(e)
        this.wait(msg, RETRY_MS)
      },
    )
  }

  /** Entries another member claimed from this one: buffered or waiting ones are dropped; acks of in-flight ones are ignored. */
  onLost(entries: EntryRef[]): void {
    this.dropHeld(entries)
    this.lostSinceCommit.push(...entries)
    this.core.emitError(
      new FencedError(
        `Member "${this.name}" of shared group "${this.core.opts.group}" lost ${refs(entries)} to another member (it held them longer than claimAfterMs ${this.core.opts.claimAfterMs} ms without refreshing them): their acks are ignored`,
      ),
    )
  }

  /** The log moved back (decision 112): the messages of `entries` are void, the records now there come as new ones. */
  onRolledBack(rollback: Error, entries: EntryRef[]): void {
    this.dropHeld(entries)
    this.core.emitError(rollback)
  }

  private dropHeld(entries: EntryRef[]): void {
    const keys = new Set(entries.map((e) => `${e.topic}/${e.partition}@${e.offset}`))
    const key = (m: SharedMessage<V>) => `${m.topic}/${m.partition}@${m.offset}`
    for (const m of this.core.buffer) if (state(m) === 'buffered' && keys.has(key(m))) this.drop(m, 'lost')
    for (const m of [...this.waiting.keys()]) if (keys.has(key(m))) this.drop(m, 'lost')
  }
}
