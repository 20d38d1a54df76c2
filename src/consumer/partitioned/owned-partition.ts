import type { PartitionReader } from '../../backends/backend.js'
import { partitionKey, type PartitionKey } from '../../core/partition-key.js'
import { AckedOffsets } from './acked-offsets.js'

/** The message a rewind goes back for: its offset and its deliveries so far (`OwnedPartition.carried`). */
export interface RewoundFrom {
  offset: number
  deliveries: number
}

/** What a rewind for message `m` carries to its next copy; undefined for what has no deliveries (a timer turn). */
export function rewoundFrom(m: { readonly offset: number; readonly deliveryCount?: number }): RewoundFrom | undefined {
  return m.deliveryCount === undefined ? undefined : { offset: m.offset, deliveries: m.deliveryCount }
}

/**
 * A partition a member owns: where it fetches, what is outstanding (fetched, not yet acked), and
 * what may be committed. Acks may come in any order; the commit point is the lowest outstanding
 * offset (or the fetch position when nothing is outstanding), so a message is never committed
 * before it is acked.
 */
export class OwnedPartition {
  reader: PartitionReader | undefined
  /** Next offset to fetch. */
  position: number
  /** Last committed offset (next offset to consume). */
  committed: number
  /** Changes on seek, so acks of messages from before the seek are ignored. */
  generation = 0
  /**
   * Fetched offsets not passed by in-order acks, from `head`, as runs of consecutive offsets:
   * `[start, end)` pairs, flat (a backlog read is one run however long, so fetching and acking a
   * message is an increment, not an array element; decision 173).
   */
  private runs: number[] = []
  private head = 0
  /** Outstanding: fetched, not acked, not forgotten (offsets acked out of order stay in `runs`, not here). */
  private count = 0
  /** Outstanding offsets acked out of order. */
  private readonly acked = new AckedOffsets()
  /** Delivered to the application and not settled. */
  inFlight = 0
  /**
   * The deliveries of the message a rewind went back for (a stateful message nacked, a message
   * whose output failed), given to its next copy when it is read again (`maxDeliveries` counts on
   * across the rewind); undefined once given, or on a restart for another reason.
   */
  carried: RewoundFrom | undefined = undefined
  /** Dead-letter writes under way. */
  pendingTerms = 0
  /** Assigned elsewhere: no more fetching; release once drained (or at `drainDeadline`). */
  revoking = false
  drainDeadline = 0
  /** Released (or being released) to another member: a processor sends no more outputs for it. */
  releasing = false
  /** The lease was lost (fenced, or taken after a timeout): acks are ignored. */
  lost = false
  /** May have new data to fetch. */
  dirty = true
  /** Fetch nothing before this time (ms since the epoch): set by a rewind after a failed output (`PartitionedLedger.rewind`). */
  pausedUntil = 0
  unwatch: (() => void) | undefined

  constructor(
    readonly topic: string,
    readonly partition: number,
    public epoch: number,
    position: number,
  ) {
    this.position = position
    this.committed = position
    this.key = partitionKey(topic, partition)
  }

  /** `"<topic>/<partition>"`. */
  readonly key: PartitionKey
  /** No longer held by the consumer (released, lost or closed). */
  dropped = false

  /** Record a fetched offset (increasing). */
  track(offset: number): void {
    const runs = this.runs
    const n = runs.length
    if (n > this.head && runs[n - 1] === offset) runs[n - 1] = offset + 1
    else runs.push(offset, offset + 1)
    this.count++
    this.position = offset + 1
  }

  /** Mark an offset acked; returns true when it was outstanding. */
  ack(offset: number): boolean {
    const runs = this.runs
    if (this.head >= runs.length) return false
    const first = runs[this.head] as number
    if (offset === first) {
      this.passFirst() // in order: the common case, no set work
      if (this.acked.size > 0)
        while (this.head < runs.length && this.acked.delete(runs[this.head] as number)) this.passFirst()
    } else {
      if (offset < first || this.acked.has(offset) || !this.holds(offset)) return false
      this.acked.add(offset)
    }
    this.count--
    if (this.head > 4096 && this.head * 2 > runs.length) {
      this.runs = runs.slice(this.head)
      this.head = 0
    }
    return true
  }

  /** `offset` is in a run (fetched, not forgotten, not passed). */
  private holds(offset: number): boolean {
    const runs = this.runs
    let lo = this.head >> 1
    let hi = runs.length >> 1 // runs lo..hi-1 (pairs)
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (offset >= (runs[2 * mid + 1] as number)) lo = mid + 1
      else hi = mid
    }
    return lo < runs.length >> 1 && offset >= (runs[2 * lo] as number)
  }

  /** The first outstanding offset is passed (acked in order, or acked before out of order). */
  private passFirst(): void {
    const runs = this.runs
    const h = this.head
    const start = (runs[h] as number) + 1
    runs[h] = start
    if (start === runs[h + 1]) this.head = h + 2
  }

  /** Forget fetched-but-undelivered offsets (revocation): they will be fetched again by whoever owns the partition next. */
  forget(offsets: readonly number[]): void {
    if (offsets.length === 0) return
    const drop = new Set(offsets)
    const old = this.runs
    const keep: number[] = []
    for (let i = this.head; i < old.length; i += 2) {
      for (let o = old[i] as number; o < (old[i + 1] as number); o++) {
        if (!drop.has(o)) {
          const n = keep.length
          if (n > 0 && keep[n - 1] === o) keep[n - 1] = o + 1
          else keep.push(o, o + 1)
        } else if (!this.acked.delete(o)) this.count--
      }
    }
    this.runs = keep
    this.head = 0
    // The new first ones may have been acked out of order already: the commit point passes them.
    while (this.head < keep.length && this.acked.delete(keep[this.head] as number)) this.passFirst()
    let low = this.position
    for (const o of offsets) if (o < low) low = o
    this.position = low
    this.reader?.seek(low)
  }

  /** Number of outstanding offsets (fetched, not acked, not forgotten). */
  get outstandingCount(): number {
    return this.count
  }

  /**
   * The offset that may be committed now: the lowest outstanding offset, or the fetch position when
   * that is lower (messages handed back — e.g. nacked, then forgotten on revocation — move it back).
   */
  commitPoint(): number {
    return this.head < this.runs.length ? Math.min(this.runs[this.head] as number, this.position) : this.position
  }

  /** Start over at `offset` (seek): nothing outstanding; older messages' acks are ignored. */
  reset(offset: number): void {
    this.runs = []
    this.head = 0
    this.count = 0
    this.acked.clear()
    this.position = offset
    this.inFlight = 0
    this.carried = undefined
    this.generation++
    this.reader?.seek(offset)
  }

  /** Drained: nothing delivered is waiting for an ack and no dead-letter write is under way. */
  get drained(): boolean {
    return this.inFlight === 0 && this.pendingTerms === 0
  }
}
