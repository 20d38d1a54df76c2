import type { IdempotentResult } from '../backend.js'
import { ID_HEADER, MAX_REMEMBERED_IDS, type RecordInput } from '../record.js'

/** Where an id was stored, and when (ms since the epoch, the machine's clock). */
interface Seen {
  offset: number
  at: number
}

/** What {@link IdTable.decide} chose: the records to write, and each input record's result once they are. */
export interface IdPlan {
  /** The records to store, in order (those whose id is not a duplicate, and those without one). */
  fresh: RecordInput[]
  /** Per input record: an offset already stored (a duplicate), or the index into `fresh` (as `~index`). */
  slots: number[]
  /** Input records whose id an earlier record of the call has: duplicates of that one. */
  repeats: Set<number>
}

/** The records of a partition from an offset on, read synchronously (the caller holds the partition lock). */
export interface IdSource {
  /** Up to `max` records from the source's position (each `{ offset, timestamp, headers }`), [] at the end. */
  next(max: number): ReadonlyArray<{ offset: number; timestamp: number; headers: Record<string, string> | undefined }>
  /** Continue from `offset`. */
  seek(offset: number): void
  close(): void
}

/**
 * The ids of one partition's idempotent records (`appendIdempotent`) as this process knows them: a
 * cache of the log, which is the only record of them (each id is the `ID_HEADER` header of the
 * record it was sent with, written in the same frame). Under the partition lock the table reads
 * what other processes appended since it last looked (`syncTo`), so a decision made under the lock
 * sees every id stored before it; a process that starts reads the partition's records of the last
 * window first. Nothing is written beside the log, so no crash can leave the table and the log
 * disagreeing.
 */
export class IdTable {
  /** Insertion order is storage order: the oldest are first (pruned first). */
  private readonly ids = new Map<string, Seen>()
  /** Offsets below this have been read into the table (-1: nothing read yet). */
  private covered = -1
  /** Ids stored before this time were never read: a window reaching further back reads the log again. */
  private since = Infinity
  /** Longest window asked for: ids are kept that long. */
  private keepMs = 0

  constructor(private readonly source: IdSource) {}

  /** Whether ids stored since `from` (ms) are all in the table: else `start` must read the log from there. */
  covers(from: number): boolean {
    return this.covered >= 0 && this.since <= from
  }

  /** Read the log from `offset` (the first record stored at or after the window's start) on the next `syncTo`. */
  start(offset: number, from: number): void {
    this.ids.clear()
    this.covered = offset
    this.since = from
    this.source.seek(offset)
  }

  /**
   * Bring the table up to the partition's end offset `end` (synchronously: under the lock). False
   * when the log ends below what the table has read (it moved back: the topic was deleted and
   * created again): the table must `start` again.
   */
  syncTo(end: number): boolean {
    if (end < this.covered) return false
    while (this.covered < end) {
      const got = this.source.next(4096)
      if (got.length === 0) break // a trimmed gap or the end as read: nothing more below `end`
      for (const r of got) {
        const id = r.headers?.[ID_HEADER]
        if (id !== undefined) this.remember(id, r.offset, r.timestamp)
        this.covered = r.offset + 1
      }
    }
    if (this.covered < end) this.covered = end
    return true
  }

  /** Choose what to write of `records` at `now` (ms) for a sender's `windowMs` (the table synced to the end). */
  decide(records: readonly RecordInput[], now: number, windowMs: number): IdPlan {
    if (windowMs > this.keepMs) this.keepMs = windowMs
    const fresh: RecordInput[] = []
    const slots: number[] = new Array(records.length)
    const repeats = new Set<number>()
    const inCall = new Map<string, number>() // id → index into fresh, for repeats within this call
    for (let i = 0; i < records.length; i++) {
      const r = records[i] as RecordInput
      const id = r.headers?.[ID_HEADER]
      if (id !== undefined) {
        const again = inCall.get(id)
        if (again !== undefined) {
          slots[i] = ~again
          repeats.add(i)
          continue
        }
        const seen = this.ids.get(id)
        if (seen !== undefined && now - seen.at <= windowMs) {
          slots[i] = seen.offset
          continue
        }
        inCall.set(id, fresh.length)
      }
      slots[i] = ~fresh.length
      fresh.push(r)
    }
    return { fresh, slots, repeats }
  }

  /** The plan's records were written from `base`, at `now`: remember their ids; the results per input record. */
  stored(plan: IdPlan, base: number, now: number): IdempotentResult[] {
    for (let k = 0; k < plan.fresh.length; k++) {
      const id = (plan.fresh[k] as RecordInput).headers?.[ID_HEADER]
      if (id !== undefined) this.remember(id, base + k, now)
    }
    this.covered = Math.max(this.covered, base + plan.fresh.length)
    this.prune(now)
    return plan.slots.map((s, i) =>
      s < 0 ? { offset: base + ~s, duplicate: plan.repeats.has(i) } : { offset: s, duplicate: true },
    )
  }

  /** Results when nothing was written (every record a duplicate). */
  unchanged(plan: IdPlan): IdempotentResult[] {
    return plan.slots.map((offset) => ({ offset, duplicate: true }))
  }

  private remember(id: string, offset: number, at: number): void {
    this.ids.delete(id) // re-inserted: its place in storage order is its latest record's
    this.ids.set(id, { offset, at })
  }

  /** Forget ids older than the longest window asked for, and the oldest past `MAX_REMEMBERED_IDS`. */
  private prune(now: number): void {
    for (const [id, seen] of this.ids) {
      if (this.ids.size <= MAX_REMEMBERED_IDS && now - seen.at <= this.keepMs) break
      this.ids.delete(id) // forgotten: not read again (the bound on memory is the point)
    }
  }

  close(): void {
    this.source.close()
  }
}
