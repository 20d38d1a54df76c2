import { LogRollbackError } from '../../core/errors.js'
import type { KeyCodec } from '../../core/keys.js'
import type { Message } from '../../core/types.js'
import type { PartitionReader } from '../backend.js'
import { readRawRecord, recordEnd } from '../record-codec.js'
import { fits, type RawBudget, type RawRecord } from '../record.js'
import {
  decodeEntry,
  decodePackedFrom,
  packedStart,
  parseHeader,
  type PackedCursor,
  type PackedHeader,
} from './entry-codec.js'
import { isConnectionError, redisError, sleep } from './connection.js'
import type { RedisKeys } from './keys.js'
import type { Scripts } from './scripts.js'
import type { RollbackNotice } from './incarnations.js'

/** A reply with no entries. */
const EMPTY = Buffer.alloc(0)
/** Most entries one read script call returns. */
const READ_MAX = 1024
/**
 * Byte budget of the records of one read script reply (decision 178): large records come in several
 * replies, each a bounded amount of Lua and decoding, rather than one of up to READ_MAX records
 * (1024 records of 32 KiB took seconds, past a Cluster client's command timeout). A reply at least
 * this long was cut by the budget, not by the partition's end.
 */
const PAGE_BYTES = 1024 * 1024
/** Reads made again when a rollback notice arrives during each (one is enough unless failovers follow each other). */
const ROLLBACK_REREADS = 4
/** Attempts of a read cut by dropped connections (about 15 s in all). */
const READ_ATTEMPTS = 20

/** A stream entry as a blocking read returned it. */
export interface RawEntry {
  offset: number
  record: Buffer
  producerId: string
}

/** A fetched reply not yet all returned: its header, and where decoding stands (at offset `next`). */
interface Held {
  blob: Buffer
  h: PackedHeader
  cur: PackedCursor
  next: number
}

/** The entries a partition watcher received last (contiguous offsets). */
export interface RecentEntries {
  first: number
  entries: RawEntry[]
}

/** What the partition's watcher (if it runs) tells its readers. */
export interface WatcherView {
  /** The entries it received last. */
  recent(): RecentEntries | undefined
  /** The latest rollback it found. */
  rollback(): RollbackNotice | undefined
}

/**
 * Reads one partition forward: from the entries its partition watcher just received when they
 * cover the next offset (no round trip), else with the `read` script (XRANGE packed into one reply).
 * After a full read it asks for {@link READ_MAX} entries whatever the caller wants, and keeps what it
 * did not return for the next reads (a group member refilling 250 at a time costs the server per
 * entry what `history` does, decision 167). After two full reads in a row it asks for the next chunk
 * before decoding the current one, so Redis works on it while this process decodes (history,
 * catching up); a seek drops that read-ahead and what is kept.
 * When the watcher found a rollback below `next`, it reads on from there and holds the report for
 * {@link takeRollback} (decision 112).
 */
export class RedisPartitionReader implements PartitionReader {
  next: number
  private closed = false
  /** Consecutive full reads without a seek. */
  private streak = 0
  private ahead: { from: number; count: number; blob: Promise<Buffer> } | undefined
  /** The last reply's entries not yet returned. */
  private held: Held | undefined
  /** The watcher's last rollback notice this reader took, and the report not yet taken. */
  private rollbackSeq: number
  private rolledBack: LogRollbackError | undefined

  constructor(
    private readonly scripts: Scripts,
    private readonly keys: RedisKeys,
    readonly topic: string,
    readonly partition: number,
    private readonly codec: KeyCodec,
    from: number,
    /** The topic is compacted: its offsets have gaps, so every read asks for each entry's offset. */
    private readonly sparse: boolean,
    private readonly watcher: WatcherView,
    private readonly onClose: (r: RedisPartitionReader) => void,
  ) {
    this.next = Math.max(0, from)
    this.rollbackSeq = watcher.rollback()?.seq ?? 0
  }

  /** Redis keeps no damage a reader could stop before: the end it reads to is the end. */
  async verifyEnd(): Promise<void> {}

  /** The rollback this reader went back over, once (then `undefined` until the next one). */
  takeRollback(): LogRollbackError | undefined {
    const r = this.rolledBack
    this.rolledBack = undefined
    return r
  }

  private checkRollback(): void {
    const rb = this.watcher.rollback()
    if (!rb || rb.seq === this.rollbackSeq) return
    this.rollbackSeq = rb.seq
    if (rb.from >= this.next) {
      // What was fetched past `next` may be the entries the rollback removed: fetch it again.
      this.held = undefined
      this.ahead = undefined
      return
    }
    const to = Math.max(this.next - 1, this.rolledBack?.to ?? 0)
    this.rolledBack = new LogRollbackError(
      this.topic,
      this.partition,
      Math.min(rb.from, this.rolledBack?.from ?? Infinity),
      to,
      'a reader (a tail or a group member)',
    )
    this.seek(rb.from)
  }

  async read(max: number): Promise<Message[]> {
    return (await this.readAs(max, false)) as Message[]
  }

  /**
   * Like `read`, without decoding (each reply is its own buffer, so the records stay valid). Stops
   * before the first record the `budget` has no room for; the kept reply's cursor is left at it, so
   * the next read goes on from there without fetching it again.
   */
  async readRaw(max: number, budget?: RawBudget): Promise<RawRecord[]> {
    if (budget?.full === true) return []
    return (await this.readAs(max, true, budget)) as RawRecord[]
  }

  private async readAs(max: number, raw: boolean, budget?: RawBudget): Promise<Array<Message | RawRecord>> {
    for (let attempt = 0; attempt < ROLLBACK_REREADS; attempt++) {
      if (this.closed || max <= 0) return []
      this.checkRollback()
      const before = this.next
      const spent = budget && { ...budget }
      const out = await this.readOn(max, raw, budget)
      const rb = this.watcher.rollback()
      if (!rb || rb.seq === this.rollbackSeq || rb.from >= this.next) return out
      // A rollback found while this read was under way: what it returned may lie past the gap. Go
      // back and read again (an empty answer would end a history there, short of what the log holds).
      this.next = before
      if (budget && spent) Object.assign(budget, spent)
    }
    this.checkRollback()
    return [] // rollback after rollback: a caller that reads on gets the records then
  }

  private async readOn(max: number, raw: boolean, budget: RawBudget | undefined): Promise<Array<Message | RawRecord>> {
    // What is kept first; when it runs out before `max`, fetch the rest (fewer than `max` means
    // the end was reached, as callers such as the group's fetch loop take it, or a full budget).
    const kept = this.fromHeld(max, raw, budget)
    if (kept === undefined) return this.fromRecent(max, raw, budget) ?? (await this.fetchOn(max, raw, budget))
    if (kept.length >= max || this.held || budget?.full === true) return kept
    const rest = this.fromRecent(max - kept.length, raw, budget) ?? (await this.fetchOn(max - kept.length, raw, budget))
    return rest.length ? kept.concat(rest) : kept
  }

  /**
   * Up to `max` entries from `next`, page after page while a page came back full (cut by its count
   * or its byte budget: the partition may go on past it). Fewer than `max` means the end was
   * reached, as callers such as a tail or the group's fetch loop take it: a reader that stopped at
   * one script call's {@link READ_MAX} would leave a tail catching up waiting for a wake-up that
   * never comes for records already stored.
   */
  private async fetchOn(max: number, raw: boolean, budget: RawBudget | undefined): Promise<Array<Message | RawRecord>> {
    let page = await this.fetchPage(max, raw, budget)
    let out = page.out
    while (page.more && out.length < max && !this.held && !this.closed && budget?.full !== true) {
      page = await this.fetchPage(max - out.length, raw, budget)
      if (page.out.length === 0) break
      out = out.concat(page.out)
    }
    return out
  }

  /**
   * Fetch from `next` with the `read` script (or take a full read-ahead), then return up to `max`,
   * and whether the page came back full (the partition may go on past it).
   */
  private async fetchPage(
    max: number,
    raw: boolean,
    budget: RawBudget | undefined,
  ): Promise<{ out: Array<Message | RawRecord>; more: boolean }> {
    const count = this.streak >= 1 ? READ_MAX : Math.min(max, READ_MAX)
    const a = this.ahead
    this.ahead = undefined
    const from = this.next
    // A read-ahead is used only when it came back full: one that found the end was issued before
    // later appends (it would hide them, and a caller can take [] for a gap), so ask again.
    let blob = a && a.from === from ? await a.blob.catch(() => EMPTY) : EMPTY
    let asked = a?.count ?? count
    if (blob.length === 0 || !isFull(blob, parseHeader(blob).count, asked)) {
      asked = count
      blob = await this.fetch(from, count, this.sparse)
    }
    if (this.closed || blob.length === 0) {
      this.streak = 0
      return { out: [], more: false }
    }
    let h = parseHeader(blob)
    if (this.sparse) h.ids = true
    else if (h.last - h.first + 1 !== h.count) {
      // Not dense (only if someone deleted entries by hand): ask for an offset per entry.
      blob = await this.fetch(from, asked, true)
      if (this.closed || blob.length === 0) return { out: [], more: false }
      h = { ...parseHeader(blob), ids: true }
    }
    this.streak = isFull(blob, h.count, asked) ? this.streak + 1 : 0
    if (this.streak >= 2) {
      const ahead = { from: h.last + 1, count: READ_MAX, blob: this.fetch(h.last + 1, READ_MAX, this.sparse) }
      ahead.blob.catch(() => undefined) // used (or dropped) by the next read
      this.ahead = ahead
    }
    this.held = { blob, h, cur: packedStart(h), next: from }
    return { out: this.fromHeld(max, raw, budget) ?? [], more: isFull(blob, h.count, asked) }
  }

  /** Up to `max` entries of the kept reply (within the budget), when it goes on at `next`. */
  private fromHeld(max: number, raw: boolean, budget?: RawBudget): Array<Message | RawRecord> | undefined {
    const k = this.held
    if (!k || k.next !== this.next) return undefined
    const out: Array<Message | RawRecord> = []
    const next = decodePackedFrom(
      k.blob,
      k.h,
      k.cur,
      max,
      raw ? null : this.codec,
      this.topic,
      this.partition,
      out,
      budget,
    )
    if (out.length > 0) this.next = k.next = next
    if (k.cur.index >= k.h.count) this.held = undefined
    return out
  }

  /** One `read` script call; rides out dropped connections (reads are idempotent). */
  private async fetch(from: number, count: number, ids: boolean): Promise<Buffer> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.scripts.call(
          'read',
          [this.keys.stream(this.topic, this.partition)],
          [from, count, ids ? '1' : '0', PAGE_BYTES],
        )
      } catch (e) {
        if (this.closed) return Buffer.alloc(0)
        if (!isConnectionError(e) || attempt >= READ_ATTEMPTS)
          throw redisError(`Read of "${this.topic}" partition ${this.partition} at offset ${from} failed`, e)
        await sleep(Math.min(25 * 2 ** attempt, 1000))
      }
    }
  }

  private fromRecent(max: number, raw: boolean, budget?: RawBudget): Array<Message | RawRecord> | undefined {
    // A compacted topic's entries may be removed between others after the watcher read them: a
    // gap there would end the read short, and a short read is taken for the end (the next wake-up
    // may never come). Its reads always go to the stream, which steps over gaps.
    if (this.sparse) return undefined
    const r = this.watcher.recent()
    if (!r) return undefined
    const i = this.next - r.first
    if (i < 0 || i >= r.entries.length || (r.entries[i] as RawEntry).offset !== this.next) return undefined
    const out: Array<Message | RawRecord> = []
    for (let k = i; k < r.entries.length && out.length < max; k++) {
      const e = r.entries[k] as RawEntry
      if (e.offset !== this.next) break
      if (raw) {
        const rec = readRawRecord(e.record, 0, recordEnd(e.record, 0), 0, e.offset)
        if (!fits(budget, rec.end - rec.start)) break
        out.push(rec)
      } else out.push(decodeEntry(e.record, this.codec, this.topic, this.partition, e.offset, e.producerId))
      this.next = e.offset + 1
    }
    return out
  }

  seek(offset: number): void {
    this.next = Math.max(0, offset)
    this.streak = 0
    this.ahead = undefined
    this.held = undefined
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    this.ahead = undefined
    this.held = undefined
    this.onClose(this)
  }
}

/** A page that holds all it was asked for, or was cut by its byte budget (not by the partition's end). */
function isFull(blob: Buffer, count: number, asked: number): boolean {
  return count >= asked || blob.length >= PAGE_BYTES
}
