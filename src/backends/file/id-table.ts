import type { IdempotentOutcome } from '../backend.js'
import { ID_HEADER, MAX_REMEMBERED_IDS } from '../record.js'
import { IdGeneration, idHash } from './id-generation.js'

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
  /** The generation the fresh ids entered, and their entries there, pending until `stored`. */
  gen: IdGeneration
  pending: number[]
  /** Entries of `gen` (past the call's window) the fresh ids took over, each with its offset and time before: put back by `abandon`. */
  replaced: number[] | undefined
  /** `stored` or `abandon` was called. */
  settled: boolean
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
 *
 * Ids are kept in two generations, as the Redis backend keeps them (decision 188): the current one
 * takes every id stored; once it holds `MAX_REMEMBERED_IDS` ids it becomes the previous one and
 * the previous one is dropped whole, as the previous one is once all its ids are older than the
 * longest window asked. So the table remembers at least the last `MAX_REMEMBERED_IDS` ids (up to
 * twice as many), forgets none within a window for age, and never deletes entries one by one.
 */
export class IdTable {
  /** The current generation (every id stored goes here) and the previous one (looked up after it). */
  private cur = new IdGeneration()
  private prev = new IdGeneration()
  /** The last plan decided, until it is stored or abandoned. */
  private open: IdPlan | undefined
  /** Offsets below this have been read into the table (-1: nothing read yet). */
  private covered = -1
  /** Ids stored before this time were never read: a window reaching further back reads the log again. */
  private since = Infinity
  /** Longest window asked for: ids are kept that long. */
  private keepMs = 0

  /** `remember`: ids a generation holds before it becomes the previous one. */
  constructor(
    private readonly source: IdSource,
    private readonly remember = MAX_REMEMBERED_IDS,
  ) {}

  /** Whether ids stored since `from` (ms) are all in the table: else `start` must read the log from there. */
  covers(from: number): boolean {
    return this.covered >= 0 && this.since <= from
  }

  /** Read the log from `offset` (the first record stored at or after the window's start) on the next `syncTo`. */
  start(offset: number, from: number): void {
    this.cur = new IdGeneration()
    this.prev = new IdGeneration()
    this.covered = offset
    this.since = from
    this.source.seek(offset)
  }

  /**
   * Bring the table up to the partition's end offset `end` (synchronously: under the lock). False
   * when the log ends below what the table has read (it moved back: the topic was deleted and
   * created again): the table must `start` again.
   */
  syncTo(end: number, windowMs = 0): boolean {
    this.abandonOpen()
    // The window of the call to come counts already: a generation dropped while reading must not be taken for past it.
    if (windowMs > this.keepMs) this.keepMs = windowMs
    if (end < this.covered) return false
    while (this.covered < end) {
      const got = this.source.next(4096)
      if (got.length === 0) break // a trimmed gap or the end as read: nothing more below `end`
      for (const r of got) {
        const id = r.headers?.[ID_HEADER]
        if (id !== undefined) {
          const h = idHash(id)
          const e = this.cur.find(id, h)
          if (e < 0) this.cur.add(id, h, r.offset, r.timestamp)
          else this.cur.set(e, r.offset, r.timestamp)
        }
        this.covered = r.offset + 1
      }
      if (this.cur.live >= this.remember) this.rotate(Date.now())
    }
    if (this.covered < end) this.covered = end
    return true
  }

  /**
   * Choose which of records with `ids` to write at `now` (ms) for a sender's `windowMs` (the table
   * synced to the end). The fresh ids enter the table at once, pending (a negative offset: `~` the
   * index into `fresh`), so a repeat later in the call finds them with the one lookup each id
   * costs; `stored` gives them their offsets (called under the lock, right after the write),
   * `abandon` takes them out if the write fails. A plan left open (its write failed, its caller
   * not yet told) is abandoned first, so its pending entries are never taken for this call's.
   */
  decide(ids: ReadonlyArray<string | undefined>, now: number, windowMs: number): IdPlan {
    this.abandonOpen()
    if (windowMs > this.keepMs) this.keepMs = windowMs
    const { cur, prev } = this
    const fresh: number[] = []
    const slots: number[] = new Array(ids.length)
    const pending: number[] = []
    let repeats: Set<number> | undefined
    let replaced: number[] | undefined
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i]
      if (id !== undefined) {
        const h = idHash(id)
        let e = cur.find(id, h)
        const g = e >= 0 || prev.live === 0 ? cur : prev
        if (g === prev) e = prev.find(id, h)
        if (e >= 0) {
          const offset = g.offsetOf(e)
          if (offset < 0) {
            // Earlier in this call: a duplicate of that record.
            slots[i] = offset
            ;(repeats ??= new Set()).add(i)
            continue
          }
          if (now - g.atOf(e) <= windowMs) {
            slots[i] = offset
            continue
          }
        }
        // New, or past this call's window: stored again. An entry of the current generation is
        // taken over (and comes back if the write fails: a longer window may still need it); one
        // of the previous generation is hidden by the new entry.
        if (e >= 0 && g === cur) {
          ;(replaced ??= []).push(e, cur.offsetOf(e), cur.atOf(e))
          cur.set(e, ~fresh.length, now)
          pending.push(e)
        } else pending.push(cur.add(id, h, ~fresh.length, now))
      }
      slots[i] = ~fresh.length
      fresh.push(i)
    }
    const plan: IdPlan = { fresh, ids, slots, repeats, gen: cur, pending, replaced, settled: false }
    this.open = plan
    return plan
  }

  /** The plan's records were written from `base`, at `now`: its pending ids get their offsets; the outcome. */
  stored(plan: IdPlan, base: number, now: number): IdempotentOutcome {
    this.settle(plan)
    const { gen, pending } = plan
    for (let k = 0; k < pending.length; k++) {
      const e = pending[k] as number
      gen.set(e, base + ~gen.offsetOf(e), now)
    }
    this.covered = Math.max(this.covered, base + plan.fresh.length)
    this.prune(now)
    return { base, slots: plan.slots, repeats: plan.repeats }
  }

  /** The plan's write failed (or wrote nothing): its pending ids leave the table (once; later calls do nothing). */
  abandon(plan: IdPlan): void {
    if (plan.settled) return
    this.settle(plan)
    const { gen, replaced } = plan
    // Taken-over entries first get back what they held; then the new entries still pending go.
    // (Only pending entries are touched: a plan is abandoned before any other reading of the log.)
    if (replaced)
      for (let k = 0; k < replaced.length; k += 3) {
        const e = replaced[k] as number
        if (gen.offsetOf(e) < 0) gen.set(e, replaced[k + 1] as number, replaced[k + 2] as number)
      }
    for (let k = 0; k < plan.fresh.length; k++) {
      const id = plan.ids[plan.fresh[k] as number]
      if (id === undefined) continue
      const h = idHash(id)
      const e = gen.find(id, h)
      if (e >= 0 && gen.offsetOf(e) < 0) gen.remove(id, h)
    }
    // Settled, this plan was the only one open: no entry number is held anywhere now.
    if (gen.size - gen.live > Math.max(1024, gen.live)) gen.compact()
  }

  /** The outcome when nothing was written (every record a duplicate: no slot is negative). */
  unchanged(plan: IdPlan): IdempotentOutcome {
    this.abandon(plan)
    return { base: 0, slots: plan.slots, repeats: plan.repeats }
  }

  /**
   * Abandon the plan left open, if any: its write failed and its caller has not been told yet
   * (a plan that was written is stored under the lock, right after its write). Its pending
   * entries must count neither as this call's nor towards a generation's size.
   */
  private abandonOpen(): void {
    if (this.open !== undefined) this.abandon(this.open)
  }

  private settle(plan: IdPlan): void {
    plan.settled = true
    if (this.open === plan) this.open = undefined
  }

  /**
   * Drop the previous generation once every id of it is past the longest window asked; rotate
   * when the current one is full. (Not by the current generation's age: an id read from the log
   * is timed by its record's timestamp, which another process may have set far in the past, and
   * the generation holding it may hold this window's ids too.)
   */
  private prune(now: number): void {
    if (this.prev.live > 0 && now - this.prev.newest > this.keepMs) this.drop(this.prev, now)
    if (this.cur.live >= this.remember) this.rotate(now)
  }

  /** The current generation becomes the previous one; the previous one is dropped. */
  private rotate(now: number): void {
    const dropped = this.prev
    this.drop(dropped, now)
    this.prev = this.cur
    this.cur = dropped
  }

  /**
   * Empty a generation. When all its ids are past every window asked so far, a longer window
   * asked later reads the log again from their end (`covers`); else they were dropped for the
   * memory bound, and are not read again.
   */
  private drop(gen: IdGeneration, now: number): void {
    if (gen.live > 0 && now - gen.newest > this.keepMs && gen.newest >= this.since) this.since = gen.newest + 1
    // A plan left open points into the generation about to be used again: settle it first.
    this.abandonOpen()
    gen.reset()
  }

  /** @internal Entries of both generations, removed ones included (what the table's arrays hold). */
  entries(): number {
    return this.cur.size + this.prev.size
  }

  close(): void {
    this.source.close()
  }
}
