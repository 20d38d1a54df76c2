import type { PreparedRecord } from '../../../producer/send-record.js'
import type { PartitionHandle } from '../partition-message.js'
import { LAST_MARK } from './state-key.js'

/** Most records of one changelog call: a Redis script call's part holds up to 2000 (`PART_RECORDS`). */
export const FLUSH_RECORDS = 2000
/** Most bytes (keys and values, and a record's overhead each) of one changelog call: a Redis part is cut past 2 MiB. */
export const FLUSH_BYTES = 1024 * 1024

/**
 * A state write: its value (`null`: a delete), its changelog record (undefined: encoded when its
 * flush is written, a value `deferredBytes` accepts), and what it counts against `FLUSH_BYTES` and
 * `MAX_STATE_BYTES` (for a record not encoded yet, a bound).
 */
export interface FlushWrite {
  readonly value: unknown
  readonly rec: PreparedRecord | undefined
  readonly bytes: number
  /** The input that made it: its offset names the record. */
  readonly by: { readonly offset: number }
  /** Its number among its input's outputs, given when it joins a flush. */
  seq: number
}

/** The keys a changelog partition may hold a value for, as its calls keep them (`PartitionState.logged`). */
export interface LoggedKeys {
  has(key: string): boolean
  /** A call carrying a value of `key` was sealed. */
  add(key: string): void
  /** A call deleting `key` was stored. */
  delete(key: string): void
}

/** Who a flush tells once it is stored or failed: a message (with the delivery token of its writes), or a timer turn. */
export interface FlushMember {
  outputDone(token: number, failure: unknown): void
}

/**
 * The state writes of consecutive flushed inputs of one partition (and one delivery of it),
 * written to the changelog in **one atomic call** (one file frame, one Redis script call): each
 * key's last write only, named after the input that made it (its offset and the write's sequence
 * number). A write that a later input of the same call overwrites is not written (decision 221):
 * the call is stored whole or not at all, so the changelog holds after it what it would hold had
 * every write been written; the input the call names last wrote its keys last, so a restore still
 * finds it (`doneThrough`). The call's members are told, in the order they joined (input order),
 * once it is stored or failed: each message is acked, or delivered again, only then.
 *
 * A flush takes members until its lane takes it (`seal()`), or until a member's writes would take
 * it past `FLUSH_RECORDS` or `FLUSH_BYTES`: the inputs processed while the partition's previous
 * call was being written go in one call.
 */
export class StateFlush {
  /** Each key's last write. */
  private readonly entries = new Map<string, FlushWrite>()
  private members: FlushMember[] = []
  private tokens: number[] = []
  private bytes = 0
  /** Taken by its lane (or settled): no more members. */
  sealed = false
  /** The input of the last write given (the writes come in input order): its records are all written. */
  private lastOffset = -1
  /** The deletes the call writes (`seal`): once it is stored, the changelog holds no value for them. */
  private tombstones: string[] = []

  constructor(
    /** The partition and delivery of its members. */
    readonly h: PartitionHandle,
    /** A write's record, for the writes not encoded yet (`FlushWrite.rec`). */
    private readonly encode: (key: string, value: unknown) => PreparedRecord,
    /** Told of a failure, once per call (a message's store reports it). */
    private readonly report?: (e: unknown) => void,
    /**
     * The keys the partition's changelog may hold a value for (`PartitionState.logged`), kept by
     * the calls as they are sealed and stored (decision 228). @default none: every delete is written
     */
    private readonly logged?: LoggedKeys,
  ) {}

  /** Whether a message's writes (the first key's, the others', a mark) fit beside what the call holds, within its limits. */
  fits(
    first: FlushWrite & { readonly key: string },
    rest: ReadonlyMap<string, FlushWrite> | undefined,
    mark: FlushWrite | undefined,
  ): boolean {
    if (this.members.length === 0) return true
    let records = this.entries.size
    let bytes = this.bytes
    const had = this.entries.get(first.key)
    if (had === undefined) records++
    bytes += first.bytes - (had?.bytes ?? 0)
    if (rest !== undefined)
      for (const [k, w] of rest) {
        const was = this.entries.get(k)
        if (was === undefined) records++
        bytes += w.bytes - (was?.bytes ?? 0)
      }
    if (mark !== undefined) {
      const was = this.entries.get(LAST_MARK)
      if (was === undefined) records++
      bytes += mark.bytes - (was?.bytes ?? 0)
    }
    return records <= FLUSH_RECORDS && bytes <= FLUSH_BYTES
  }

  /** The write `w` of `key`, numbered `seq`: it replaces the call's earlier write of the key (moved last: the records stay in input order). */
  write(key: string, w: FlushWrite, seq: number): void {
    const had = this.entries.get(key)
    if (had !== undefined) {
      this.entries.delete(key)
      this.bytes -= had.bytes
    }
    w.seq = seq
    this.entries.set(key, w)
    this.bytes += w.bytes
    this.lastOffset = w.by.offset
  }

  /** `member` (the input whose writes were just given to `write`) is told with `token` once the call settles. */
  join(member: FlushMember, token: number): void {
    this.members.push(member)
    this.tokens.push(token)
  }

  /** The first `n` of `members`, with their `tokens`, join in order (as `join` of each; copied, not kept). */
  joinAll(members: readonly FlushMember[], tokens: readonly number[], n: number): void {
    if (this.members.length === 0) {
      // Copied at their size, not grown one by one.
      this.members = members.slice(0, n)
      this.tokens = tokens.slice(0, n)
      return
    }
    for (let i = 0; i < n; i++) this.join(members[i] as FlushMember, tokens[i] as number)
  }

  /**
   * No more members: the records to write (the writes not encoded yet encoded now: only the last
   * of each key), and each one's source position. A delete of a key the changelog holds no value
   * for (with `logged`) is left out, unless the call's last input made it: the call still names
   * that input, and the changelog reads the same without the tombstone (decision 228).
   * @throws what encoding a write throws (none does: `deferredBytes`).
   */
  seal(): { recs: PreparedRecord[]; positions: Array<{ offset: number; seq: number }> } {
    this.sealed = true
    const logged = this.logged
    const recs: PreparedRecord[] = []
    const positions: Array<{ offset: number; seq: number }> = []
    for (const [k, e] of this.entries) {
      if (e.value === null) {
        if (logged !== undefined && !logged.has(k) && e.by.offset !== this.lastOffset) continue
        this.tombstones.push(k)
      } else logged?.add(k) // before the call: a call that fails may still have been stored
      recs.push(e.rec ?? this.encode(k, e.value))
      positions.push({ offset: e.by.offset, seq: e.seq })
    }
    return { recs, positions }
  }

  /** Stored (`failure` undefined) or failed: every member told, in input order. */
  settle(failure: unknown): void {
    this.sealed = true
    if (failure !== undefined) this.report?.(failure)
    // Stored: its deletes are the changelog's last word on their keys (the partition's next call is sealed only after this one settles).
    else if (this.logged !== undefined) for (const k of this.tombstones) this.logged.delete(k)
    const members = this.members
    for (let i = 0; i < members.length; i++) (members[i] as FlushMember).outputDone(this.tokens[i] as number, failure)
  }
}
