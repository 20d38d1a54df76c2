import type { IdempotentResult } from '../backend.js'
import { ID_HEADER, MAX_REMEMBERED_IDS } from '../record.js'

/** Where an id was stored, and when (ms since the epoch, the machine's clock). */
interface Seen {
  offset: number
  at: number
}

/** What {@link IdTable.decide} chose: the records to write, and each input record's result once they are. */
export interface IdPlan {
  /** The input records to store (indexes, ascending): those whose id is not a duplicate, and those without one. */
  fresh: number[]
  /** The ids of the input records (undefined: none). */
  ids: ReadonlyArray<string | undefined>
  /** Per input record: an offset already stored (a duplicate), or the index into `fresh` (as `~index`). */
  slots: number[]
  /** Input records whose id an earlier record of the call has: duplicates of that one (undefined: none). */
  repeats: Set<number> | undefined
  /** The table's entries of the fresh ids, pending until `stored`. */
  pending: Seen[]
  /** The entries (past the call's window) the fresh ids replaced: put back by `abandon`. */
  replaced: Array<[string, Seen]> | undefined
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

  /**
   * Choose which of records with `ids` to write at `now` (ms) for a sender's `windowMs` (the table
   * synced to the end). The fresh ids enter the table at once, pending (a negative offset: `~` the
   * index into `fresh`), so a repeat later in the call finds them with the one lookup each id
   * costs; `stored` gives them their offsets, `abandon` takes them out if the write fails.
   */
  decide(ids: ReadonlyArray<string | undefined>, now: number, windowMs: number): IdPlan {
    if (windowMs > this.keepMs) this.keepMs = windowMs
    const fresh: number[] = []
    const slots: number[] = new Array(ids.length)
    const pending: Seen[] = []
    let repeats: Set<number> | undefined
    let replaced: Array<[string, Seen]> | undefined
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i]
      if (id !== undefined) {
        const seen = this.ids.get(id)
        if (seen !== undefined) {
          if (seen.offset < 0) {
            // Earlier in this call: a duplicate of that record.
            slots[i] = seen.offset
            ;(repeats ??= new Set()).add(i)
            continue
          }
          if (now - seen.at <= windowMs) {
            slots[i] = seen.offset
            continue
          }
          // Past this call's window: stored again, at the end of the storage order (the entry it
          // replaces comes back if the write fails: a longer window may still need it).
          this.ids.delete(id)
          ;(replaced ??= []).push([id, seen])
        }
        const entry = { offset: ~fresh.length, at: now }
        this.ids.set(id, entry)
        pending.push(entry)
      }
      slots[i] = ~fresh.length
      fresh.push(i)
    }
    return { fresh, ids, slots, repeats, pending, replaced }
  }

  /** The plan's records were written from `base`, at `now`: its pending ids get their offsets; the results per input record. */
  stored(plan: IdPlan, base: number, now: number): IdempotentResult[] {
    for (const e of plan.pending) {
      e.offset = base + ~e.offset
      e.at = now
    }
    this.covered = Math.max(this.covered, base + plan.fresh.length)
    this.prune(now)
    const out = new Array<IdempotentResult>(plan.slots.length)
    for (let i = 0; i < out.length; i++) {
      const s = plan.slots[i] as number
      out[i] = s < 0 ? { offset: base + ~s, duplicate: plan.repeats?.has(i) === true } : { offset: s, duplicate: true }
    }
    return out
  }

  /** The plan's write failed (or wrote nothing): its pending ids leave the table. */
  abandon(plan: IdPlan): void {
    for (let k = 0; k < plan.fresh.length; k++) {
      const id = plan.ids[plan.fresh[k] as number]
      if (id !== undefined && (this.ids.get(id)?.offset ?? 0) < 0) this.ids.delete(id)
    }
    if (plan.replaced) for (const [id, seen] of plan.replaced) this.ids.set(id, seen)
  }

  /** Results when nothing was written (every record a duplicate). */
  unchanged(plan: IdPlan): IdempotentResult[] {
    this.abandon(plan)
    return plan.slots.map((offset) => ({ offset, duplicate: true }))
  }

  private remember(id: string, offset: number, at: number): void {
    this.ids.delete(id) // re-inserted: its place in storage order is its latest record's
    this.ids.set(id, { offset, at })
  }

  /** Forget ids older than the longest window asked for, and the oldest past `MAX_REMEMBERED_IDS`. */
  private prune(now: number): void {
    const first = this.ids.values().next().value as Seen | undefined
    if (first === undefined || (this.ids.size <= MAX_REMEMBERED_IDS && now - first.at <= this.keepMs)) return
    for (const [id, seen] of this.ids) {
      const old = now - seen.at > this.keepMs
      if (this.ids.size <= MAX_REMEMBERED_IDS && !old) break
      this.ids.delete(id)
      // Past every window asked so far: a longer window asked later reads the log again from its
      // start (`covers`). Past the most remembered: forgotten, not read again (memory is bounded).
      if (old && seen.at >= this.since) this.since = seen.at + 1
    }
  }

  close(): void {
    this.source.close()
  }
}
