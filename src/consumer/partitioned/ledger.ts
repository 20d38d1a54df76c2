import type { TopicPartition } from '../../backends/assign.js'
import type { PartitionOffsets } from '../../backends/backend.js'
import type { MessageFactory } from '../../backends/record.js'
import type { Lease } from '../../backends/group.js'
import { partitionKey, type PartitionKey } from '../../core/partition-key.js'
import type { Message } from '../../core/types.js'
import { refillAt } from '../fetch-loop.js'
import { GroupMessageImpl, type Settler } from '../group-message.js'
import type { MemberCore, MemberLedger } from '../member-core.js'
import { OwnedPartition, type RewoundFrom } from './owned-partition.js'
import {
  DELIVERED,
  SETTLED,
  current,
  isDelivered,
  isSettled,
  setDelivered,
  setSettled,
  type PartitionHandle,
  type PartitionMessage,
} from './partition-message.js'

/** How a partitioned ledger makes its messages: `GroupMessageImpl`s, or a processor's (which can send). */
export interface MessageMaker {
  /** The factory a read builds its messages with. */
  factory(settler: Settler<PartitionHandle>, handle: PartitionHandle): MessageFactory
  /** A copy of a plain read message. */
  from<V>(m: Message, settler: Settler<PartitionHandle>, handle: PartitionHandle): PartitionMessage<V>
}

/** A consumer's messages. */
export const GROUP_MESSAGES: MessageMaker = {
  factory: (settler, handle) => GroupMessageImpl.factory<PartitionHandle>(settler, handle),
  from: <V>(m: Message, settler: Settler<PartitionHandle>, handle: PartitionHandle) =>
    GroupMessageImpl.from<V, PartitionHandle>(m, 0, settler, handle),
}

/** What a processor with state (`ProcessorOptions.state`) is told of its partitions. */
export interface PartitionHooks {
  /** A partition was opened, before the fetch loop sees it. */
  opened(p: OwnedPartition): void
  /** A partition was given up. */
  dropped(p: OwnedPartition): void
  /** Messages of `p` were read, in offset order (made for generation `generation`). */
  fetched(msgs: readonly PartitionMessage<unknown>[], p: OwnedPartition): void
}

/**
 * Give `p.carried`'s deliveries to the message of its offset among `made` (a read of `p`, in offset
 * order), once: its copy read again after a rewind counts its deliveries on. Dropped once the
 * reads pass the offset (a record no longer there).
 */
function carryDeliveries(made: readonly GroupMessageImpl<unknown, PartitionHandle>[], p: OwnedPartition): void {
  const c = p.carried as RewoundFrom
  const last = made[made.length - 1]
  if (last === undefined || last.offset < c.offset) return
  p.carried = undefined
  for (const m of made) if (m.offset === c.offset) m.deliveryCount = Math.max(m.deliveryCount, c.deliveries)
}

/** The member core of a partitioned member. */
export type PartitionedCore<V> = MemberCore<V, PartitionHandle, PartitionedLedger<V>>

/**
 * The partitioned mode's ledger (what the member core asks of a mode, `MemberLedger`): the
 * partitions the member owns, what is fetched and not settled (`outstanding`, bounded by
 * `maxInFlight`), how its messages are handed out, settle and go back to the buffer, and how a
 * partition is opened, dropped or started over. Coordination, commits and the partition reads
 * (this folder's other files) take it, and reach the member's core through it.
 */
export class PartitionedLedger<V = unknown> implements MemberLedger<V, PartitionHandle> {
  readonly parts = new Map<PartitionKey, OwnedPartition>()
  /** Fetched (buffered or delivered) and not settled, over every partition. */
  outstanding = 0
  /** Seeks of partitions not owned now, applied when they are acquired. */
  readonly pendingSeeks = new Map<PartitionKey, number>()
  /**
   * With `from: 'end'`: each topic's end offsets when `consumer()` was called, so a partition the
   * group has no commit for starts there, and a message sent right after `consumer()` is delivered
   * (as a tail's `'end'` is fixed when `tail()` is called).
   */
  readonly endsAtCreation = new Map<string, number[]>()
  /**
   * Where each partition this member dropped stood (its acked prefix). A lease acquired again
   * where the group has no commit (its state was lost: a Redis restored from an older snapshot, a
   * failover to a replica that lagged) goes on from there rather than from `from`: the group's
   * commits vanished, not the member's knowledge of what it processed.
   */
  private readonly droppedAt = new Map<PartitionKey, number>()
  /** Re-delivery timers of nacked messages. */
  readonly redeliveries = new Set<NodeJS.Timeout>()
  /** How its messages settle: kept out of the consumer's API. */
  readonly #settler: Settler<PartitionHandle> = {
    ack: (m) => this.#ack(m),
    nack: (m, ms) => this.#nack(m, ms),
    term: (m, r) => this.#term(m, r),
    release: (m) => this.#release(m),
  }
  readonly #maxInFlight: number
  /**
   * When the member's session lapses unless it heartbeats again (ms, this process's clock): the
   * start of its last successful heartbeat plus `sessionTimeoutMs`. Until then no other member can
   * take its leases; a processor's outputs carry it, and the store refuses them after it.
   */
  sessionDeadline = Infinity
  /** A stateful processor's (`PartitionHooks`); none for other members. */
  hooks: PartitionHooks | undefined
  /** A processor's: its views pass over a message whose partition was rewound or sought since it was handed out. */
  stale: ((m: PartitionMessage<unknown>) => boolean) | undefined
  /** Room (`maxInFlight` less outstanding) from which a settlement wakes the fetch loop (the refill rule). */
  readonly #refill: number

  constructor(
    /** The member core this ledger records in (buffer, wakes, state, dead letters). */
    readonly core: PartitionedCore<V>,
    /** A revoking partition drained: run a coordination step soon (it releases the partition). */
    private readonly revokeDrained: () => void,
    /** How its messages are made. */
    private readonly make: MessageMaker = GROUP_MESSAGES,
  ) {
    this.#maxInFlight = core.opts.maxInFlight
    this.#refill = refillAt(this.#maxInFlight)
  }

  /** What `p`'s next read builds its messages with: this mode's messages, sharing one handle (partition, generation). */
  messageFactory(p: OwnedPartition): MessageFactory {
    return this.make.factory(this.#settler, { part: p, generation: p.generation })
  }

  /** Messages `p` fetched (in offset order), counted outstanding and buffered. */
  buffered(msgs: readonly Message[], p: OwnedPartition): void {
    let made: PartitionMessage<V>[]
    // Built by the read's `messageFactory` (a reader that takes one builds all of a read with it) …
    if (msgs.length > 0 && msgs[0] instanceof GroupMessageImpl) made = msgs as PartitionMessage<V>[]
    else {
      // … or plain: copied. `map` allocates the array at its size (pushing grows it step by step).
      const handle: PartitionHandle = { part: p, generation: p.generation }
      const settler = this.#settler
      const make = this.make
      made = msgs.map((m) => make.from<V>(m, settler, handle))
    }
    if (p.carried !== undefined) carryDeliveries(made, p)
    this.core.buffer = this.core.buffer.length === 0 ? made : this.core.buffer.concat(made)
    this.hooks?.fetched(made, p)
    for (let i = 0; i < msgs.length; i++) p.track((msgs[i] as Message).offset)
    this.outstanding += msgs.length
  }

  /**
   * Deliver the buffer's first messages while nothing about them needs a decision: live (same
   * generation, partition held), never handed out or settled, under `maxDeliveries`. The rest of
   * `take` starts where this stops. One check of the partition per read's messages (they share a
   * handle), and its `inFlight` is added per run.
   */
  deliverPrefix(n: number): number {
    const buf = this.core.buffer
    const max = this.core.opts.maxDeliveries ?? Infinity
    let handle: PartitionHandle | undefined
    let run = 0
    let i = 0
    for (; i < n; i++) {
      const m = buf[i] as PartitionMessage<V>
      const h = GroupMessageImpl.handle(m)
      if (h !== handle) {
        if (!current(h)) break
        if (handle !== undefined) handle.part.inFlight += run
        handle = h
        run = 0
      }
      if (GroupMessageImpl.flags(m) !== 0 || m.deliveryCount >= max) break
      m.deliveryCount++
      GroupMessageImpl.setFlags(m, DELIVERED)
      run++
    }
    if (handle !== undefined) handle.part.inFlight += run
    return i
  }

  deliverable(m: PartitionMessage<V>): boolean {
    return this.live(m)
  }

  /** The member counts deliveries itself: `deliveryCount` is the deliveries made. */
  deliveriesMade(m: PartitionMessage<V>): number {
    return m.deliveryCount
  }

  deliver(m: PartitionMessage<V>): void {
    const h = GroupMessageImpl.handle(m)
    m.deliveryCount++
    setDelivered(m, true)
    h.part.inFlight++
  }

  unread(items: PartitionMessage<V>[]): void {
    const back: PartitionMessage<V>[] = []
    for (const m of items) {
      const h = GroupMessageImpl.handle(m)
      if (!isDelivered(m) || isSettled(m)) continue
      setDelivered(m, false)
      h.part.inFlight--
      m.deliveryCount--
      back.push(m)
    }
    if (back.length) {
      this.core.buffer = back.concat(this.core.buffer)
      this.core.wakeViews()
      this.core.settleWake.wake()
    }
  }

  // ---- settlement ---------------------------------------------------------------------

  private live(m: PartitionMessage<unknown>): boolean {
    return !isSettled(m) && current(GroupMessageImpl.handle(m))
  }

  private undeliver(m: PartitionMessage<unknown>): void {
    const h = GroupMessageImpl.handle(m)
    if (isDelivered(m)) {
      setDelivered(m, false)
      h.part.inFlight--
    }
  }

  #ack(m: PartitionMessage<unknown>): void {
    // `live` and `undeliver` written out: this runs once per message.
    const h = GroupMessageImpl.handle(m)
    const part = h.part
    const f = GroupMessageImpl.flags(m)
    if ((f & SETTLED) !== 0 || !current(h)) return
    GroupMessageImpl.setFlags(m, SETTLED)
    if ((f & DELIVERED) !== 0) part.inFlight--
    this.settled(part, m.offset)
  }

  private settled(part: OwnedPartition, offset: number): void {
    // A dropped partition's outstanding messages were all counted out when it was dropped (a
    // dead-letter write can complete after that).
    if (!part.dropped && part.ack(offset)) {
      // The fetch loop reads nothing until the refill mark is free: waking it on every ack only spins it.
      if (this.#maxInFlight - --this.outstanding >= this.#refill) this.core.fetchWake.wake()
    }
    this.core.settleWake.wake()
    if (part.revoking && part.drained) this.revokeDrained()
  }

  #nack(m: PartitionMessage<unknown>, delayMs: number): void {
    if (!this.live(m)) return
    this.undeliver(m)
    const h = GroupMessageImpl.handle(m)
    this.core.settleWake.wake()
    if (h.part.revoking && h.part.drained) this.revokeDrained()
    const again = () => {
      if (!this.live(m) || h.part.revoking || this.core.state !== 'running') return
      this.core.buffer.push(m as PartitionMessage<V>)
      this.core.wakeViews()
    }
    if (delayMs <= 0) return again()
    const t = setTimeout(() => {
      this.redeliveries.delete(t)
      again()
    }, delayMs)
    if (!this.core.keepAlive) t.unref()
    this.redeliveries.add(t)
  }

  #release(m: PartitionMessage<unknown>): void {
    const h = GroupMessageImpl.handle(m)
    if (!this.live(m) || !isDelivered(m)) return
    setDelivered(m, false)
    h.part.inFlight--
    m.deliveryCount--
    this.core.putBack(m as PartitionMessage<V>)
    this.core.wakeViews()
    this.core.settleWake.wake()
    const part = GroupMessageImpl.handle(m).part
    if (part.revoking && part.drained) this.revokeDrained()
  }

  #term(m: PartitionMessage<unknown>, reason: string): void {
    if (!this.live(m)) return
    const h = GroupMessageImpl.handle(m)
    setSettled(m, true)
    this.undeliver(m)
    const part = h.part
    if (!this.core.dlq) return this.settled(part, m.offset)
    part.pendingTerms++
    this.core.dlq.send(
      m,
      reason,
      () => {
        part.pendingTerms--
        if (h.generation === part.generation) this.settled(part, m.offset)
        else this.core.settleWake.wake()
      },
      (e) => {
        part.pendingTerms--
        setSettled(m, false)
        this.core.settleWake.wake()
        this.core.emitError(e)
        this.#nack(m, 1000)
      },
    )
  }

  /** Where `from: 'end'` starts a partition: its end when `consumer()` was called (not past today's end), else today's. */
  private endFrom(lease: Lease, offsets: PartitionOffsets | undefined): number {
    const now = offsets?.end ?? 0
    const then = this.endsAtCreation.get(lease.topic)?.[lease.partition]
    return then === undefined ? now : Math.min(then, now)
  }

  /** Open a newly leased partition (not yet visible to the fetch loop), given its offsets as this step found them. */
  async acquire(lease: Lease, offsets: PartitionOffsets | undefined): Promise<OwnedPartition> {
    const key = partitionKey(lease.topic, lease.partition)
    const start = offsets?.start ?? 0
    const seek = this.pendingSeeks.get(key)
    this.pendingSeeks.delete(key)
    // Not past today's end: offsets from there on (a log that moved back) are records still to read.
    const at = this.droppedAt.get(key)
    const before = at === undefined ? undefined : Math.min(at, offsets?.end ?? at)
    this.droppedAt.delete(key)
    let position =
      seek ?? lease.committed ?? before ?? (this.core.opts.from === 'end' ? this.endFrom(lease, offsets) : start)
    if (position < start) position = start
    const p = new OwnedPartition(lease.topic, lease.partition, lease.epoch, position)
    if (seek !== undefined || lease.committed === undefined) p.committed = -1 // commit the start position at once ('end' must stick)
    try {
      p.reader = await this.core.backend.openReader(lease.topic, lease.partition, position)
    } catch (e) {
      // Taken again at a later step: where it was to start is kept for then.
      if (seek !== undefined && !this.pendingSeeks.has(key)) this.pendingSeeks.set(key, seek)
      if (at !== undefined && !this.droppedAt.has(key)) this.droppedAt.set(key, at)
      throw e
    }
    this.hooks?.opened(p)
    return p
  }

  /** Drop undelivered buffered messages of `p` (all partitions when undefined): they were never handed out. */
  forgetBuffered(p?: OwnedPartition): void {
    const keep: PartitionMessage<V>[] = []
    const dropped = new Map<OwnedPartition, number[]>()
    for (const m of this.core.buffer) {
      const h = GroupMessageImpl.handle(m)
      if (p === undefined || h.part === p) {
        if (!isSettled(m) && h.generation === h.part.generation) {
          const list = dropped.get(h.part) ?? []
          list.push(m.offset)
          dropped.set(h.part, list)
        }
      } else keep.push(m)
    }
    this.core.buffer = keep
    for (const [part, offsets] of dropped) {
      const before = part.outstandingCount
      part.forget(offsets)
      this.outstanding -= before - part.outstandingCount
    }
  }

  dropPartition(p: OwnedPartition): TopicPartition {
    this.droppedAt.set(p.key, p.commitPoint())
    this.hooks?.dropped(p)
    this.forgetBuffered(p)
    this.outstanding -= p.outstandingCount
    this.parts.delete(p.key)
    p.dropped = true
    p.unwatch?.()
    p.unwatch = undefined
    void p.reader?.close()
    this.core.settleWake.wake()
    return { topic: p.topic, partition: p.partition }
  }

  /**
   * Deliver `p` again from its commit point (its lowest message not acked), after `delayMs`: an
   * output of one of its messages failed for good. Every message of `p` handed out since is stale
   * (its acks ignored, its outputs not written), so no later message's output is stored before the
   * failed message's, which comes first again (README "Exactly-once processing", "Order").
   * `from`: the message it goes back for (its offset and deliveries so far), whose next copy counts
   * its deliveries on from there (`maxDeliveries`).
   */
  rewind(p: OwnedPartition, delayMs: number, from?: RewoundFrom): void {
    if (p.lost || p.dropped) return
    if (p.revoking || this.core.state !== 'running') {
      // It will not be read here again: it stores no more outputs, so its next owner (or this
      // member's next start) processes the messages from the failed one on, in order.
      p.releasing = true
      return
    }
    this.restart(p, p.commitPoint())
    if (from !== undefined && from.offset >= p.position) p.carried = from
    p.pausedUntil = Date.now() + delayMs
    this.wakeAfterPause(p)
  }

  /**
   * Wake the fetch loop once `p`'s pause is over by `Date.now()`, which the loop's rounds check: a
   * timer may fire a little before it (the two clocks differ), and a round that finds the pause
   * not quite over skips the partition and sleeps; with no other wake to come (a Redis partition
   * whose records were all read), it was never read again.
   */
  private wakeAfterPause(p: OwnedPartition): void {
    const t = setTimeout(
      () => {
        this.redeliveries.delete(t)
        if (!p.lost && !p.dropped && p.pausedUntil !== Infinity && p.pausedUntil > Date.now())
          return this.wakeAfterPause(p)
        this.core.fetchWake.wake()
      },
      Math.max(1, p.pausedUntil - Date.now()),
    )
    if (!this.core.keepAlive) t.unref()
    this.redeliveries.add(t)
  }

  /** Start `p` over at `offset` (a seek): nothing of it is outstanding, and the new position is committed at the next commit. */
  restart(p: OwnedPartition, offset: number): void {
    this.forgetBuffered(p)
    this.outstanding -= p.outstandingCount
    p.reset(offset)
    p.committed = -1
    p.dirty = true
    this.core.fetchWake.wake()
    this.core.settleWake.wake()
  }
}
