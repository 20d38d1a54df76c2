import type { PartitionReader } from '../backends/backend.js'
import { partitionKey, type PartitionKey } from '../core/partition-key.js'

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
  /** Fetched offsets not yet acked, in fetch order, from `head`. */
  private outstanding: number[] = []
  private head = 0
  /** Outstanding offsets acked out of order. */
  private readonly acked = new Set<number>()
  /** Delivered to the application and not settled. */
  inFlight = 0
  /** Dead-letter writes under way. */
  pendingTerms = 0
  /** Assigned elsewhere: no more fetching; release once drained (or at `drainDeadline`). */
  revoking = false
  drainDeadline = 0
  /** The lease was lost (fenced, or taken after a timeout): acks are ignored. */
  lost = false
  /** May have new data to fetch. */
  dirty = true
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

  /** Record fetched offsets (increasing). */
  track(offset: number): void {
    this.outstanding.push(offset)
    this.position = offset + 1
  }

  /** Mark an offset acked; returns true when it was outstanding. */
  ack(offset: number): boolean {
    if (this.head >= this.outstanding.length) return false
    const first = this.outstanding[this.head] as number
    if (offset === first) {
      this.head++ // in order: the common case, no set work
      if (this.acked.size > 0) while (this.head < this.outstanding.length && this.acked.delete(this.outstanding[this.head] as number)) this.head++
    } else {
      if (offset < first || this.acked.has(offset)) return false
      this.acked.add(offset)
    }
    if (this.head > 4096 && this.head * 2 > this.outstanding.length) {
      this.outstanding = this.outstanding.slice(this.head)
      this.head = 0
    }
    return true
  }

  /** Forget fetched-but-undelivered offsets (revocation): they will be fetched again by whoever owns the partition next. */
  forget(offsets: readonly number[]): void {
    if (offsets.length === 0) return
    const drop = new Set(offsets)
    const keep: number[] = []
    for (let i = this.head; i < this.outstanding.length; i++) {
      const o = this.outstanding[i] as number
      if (!drop.has(o)) keep.push(o)
    }
    this.outstanding = keep
    this.head = 0
    // The new first ones may have been acked out of order already: the commit point passes them.
    while (this.head < keep.length && this.acked.delete(keep[this.head] as number)) this.head++
    let low = this.position
    for (const o of offsets) if (o < low) low = o
    this.position = low
    this.reader?.seek(low)
  }

  /** Number of outstanding offsets. */
  get outstandingCount(): number {
    return this.outstanding.length - this.head
  }

  /**
   * The offset that may be committed now: the lowest outstanding offset, or the fetch position when
   * that is lower (messages handed back — e.g. nacked, then forgotten on revocation — move it back).
   */
  commitPoint(): number {
    return this.head < this.outstanding.length ? Math.min(this.outstanding[this.head] as number, this.position) : this.position
  }

  /** Start over at `offset` (seek): nothing outstanding; older messages' acks are ignored. */
  reset(offset: number): void {
    this.outstanding = []
    this.head = 0
    this.acked.clear()
    this.position = offset
    this.inFlight = 0
    this.generation++
    this.reader?.seek(offset)
  }

  /** Drained: nothing delivered is waiting for an ack and no dead-letter write is under way. */
  get drained(): boolean {
    return this.inFlight === 0 && this.pendingTerms === 0
  }
}
