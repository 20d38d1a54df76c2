import { InvalidArgumentError } from '../../../core/errors.js'
import type { Key } from '../../../core/types.js'
import { encodeStateKey } from '../state/state-key.js'
import type { PartitionState } from '../state/partition-state.js'
import { MAX_STATE_BYTES, MAX_STATE_WRITES, STATE_RECORD_OVERHEAD, type StateStore } from '../state/state-store.js'
import { WindowIndex } from '../windows/window-index.js'

/** The sides of a join: 0 the left topic's records, 1 the right's. */
export type Side = 0 | 1

/** A record kept for the join: its event time and value. */
export type Kept = [t: number, value: unknown]

/**
 * A key's kept records in the state, `j:<encoded key>`: each side's records by arrival (`l`, `r`),
 * and `m`, each side's largest event time after the message that last wrote it (`null`: none yet).
 */
export interface KeptRecords {
  l: Kept[]
  r: Kept[]
  m: Marks
}

/** Each side's largest event time seen (`null`: none yet), as stored. */
export type Marks = [left: number | null, right: number | null]

/** The marks' own key, written by a message that removes keys (the marks they carried go with them). */
export const MARKS_KEY = 'jm'

const PREFIX = 'j:'

/** Most keys one message's expiry removes or rewrites: its own key and the marks are its other writes. */
const EXPIRE_LIMIT = MAX_STATE_WRITES - 2

/** Bytes of a message's state writes left unused: the estimate below against the store's count. */
const BYTES_MARGIN = 64 * 1024

/** What writing `value` to state key `key` (undefined: deleting it) counts against `MAX_STATE_BYTES`, about. */
const cost = (key: string, value: unknown): number =>
  Buffer.byteLength(key) +
  (value === undefined ? 0 : Buffer.byteLength(JSON.stringify(value))) +
  STATE_RECORD_OVERHEAD +
  16

/** A partition's join as a stream runs it: rebuilt from its state when it was restored or rewound. */
export interface JoinLane {
  generation: number
  /** Keys with kept records, by the earliest of them's event time + `withinMs`. */
  index: WindowIndex
  marks: Marks
}

/** A pair found: the left and the right record, by event time and value. */
export interface Pair {
  left: Kept
  right: Kept
}

const larger = (a: number | null, b: number | null): number | null => (a === null ? b : b === null ? a : Math.max(a, b))

/**
 * The records a windowed stream–stream join keeps per input partition, and what one record does to
 * them (`joinStreams()`, decision 210). A record of side s at event time t, of key k:
 *
 * - is late when t is below its own side's watermark (that side's largest event time before it,
 *   less `latenessMs`); a late record is kept by no one and joins nothing;
 * - else it pairs with every kept record of the other side of k whose event time is within
 *   `withinMs` of t, in the order they were kept, and is kept itself;
 * - the join's watermark W is the smaller of the two sides' watermarks; a kept record with event
 *   time + `withinMs` below W can pair with no record to come that is not late (those are at or
 *   past W), so it is removed, at most about 1000 keys per message (the rest with the next ones:
 *   removing them is not needed for the pairs to be right, only to keep the state small).
 *
 * Whether a record is late depends on its own side's records before it alone, so the pairs found
 * depend on the two topics' partitions, not on how their records interleave in the join topic.
 */
export class JoinBuffers {
  constructor(
    private readonly withinMs: number,
    private readonly latenessMs: number,
  ) {}

  /** The lane of a partition's state (restored or rewound): its index and marks rebuilt from it. */
  lane(state: Pick<PartitionState, 'get' | 'entries'>, generation: number): JoinLane {
    const index = new WindowIndex()
    let marks: Marks = (state.get(MARKS_KEY) as Marks | undefined) ?? [null, null]
    for (const [k, v] of state.entries()) {
      if (typeof k !== 'string' || !k.startsWith(PREFIX)) continue
      const kept = v as KeptRecords
      index.add(this.firstEnd(kept), k)
      marks = [larger(marks[0], kept.m[0]), larger(marks[1], kept.m[1])]
    }
    return { generation, index, marks }
  }

  /** Whether a record of `side` at `t` is late: below its side's watermark. */
  late(lane: JoinLane, side: Side, t: number): boolean {
    const seen = lane.marks[side]
    return seen !== null && t < seen - this.latenessMs
  }

  /**
   * Pair a record (not late) with the other side's kept records of its key, keep it, and remove
   * the records the join's watermark passed; writes the state and `lane`. Returns the pairs, in
   * the order their outputs are to be sent.
   */
  add(st: StateStore, lane: JoinLane, side: Side, key: Key, t: number, value: unknown): Pair[] {
    const k = PREFIX + encodeStateKey(key)
    const had = st.get<KeptRecords>(k)
    const pairs: Pair[] = []
    for (const x of (side === 0 ? had?.r : had?.l) ?? [])
      if (Math.abs(x[0] - t) <= this.withinMs)
        pairs.push(side === 0 ? { left: [t, value], right: x } : { left: x, right: [t, value] })
    const marks: Marks =
      side === 0 ? [larger(lane.marks[0], t), lane.marks[1]] : [lane.marks[0], larger(lane.marks[1], t)]
    lane.marks = marks
    const w = this.watermark(marks)
    if (had !== undefined) lane.index.remove(this.firstEnd(had), k)
    const mine: KeptRecords = {
      l: this.live(side === 0 ? [...(had?.l ?? []), [t, value]] : (had?.l ?? []), w),
      r: this.live(side === 1 ? [...(had?.r ?? []), [t, value]] : (had?.r ?? []), w),
      m: marks,
    }
    // The record itself is always kept: it is at or past its side's watermark, so at or past w.
    st.set(k, mine)
    lane.index.add(this.firstEnd(mine), k)
    const budget = MAX_STATE_BYTES - cost(k, mine) - cost(MARKS_KEY, marks) - BYTES_MARGIN
    // A key removed takes its marks with it: they are written on their own then.
    if (this.expire(st, lane, w, budget)) st.set(MARKS_KEY, marks)
    return pairs
  }

  /**
   * Remove the kept records watermark `w` passed, of at most `EXPIRE_LIMIT` keys whose writes fit
   * in `budget` bytes (the rest stay in the index for the next records: removing them is not
   * needed for the pairs, only for the state's size); whether a key was removed.
   */
  private expire(st: StateStore, lane: JoinLane, w: number, budget: number): boolean {
    let removed = false
    let left = budget
    const due = lane.index.takeUpTo(w, EXPIRE_LIMIT, true)
    for (const [i, { key }] of due.entries()) {
      const kept = st.get<KeptRecords>(key)
      if (kept === undefined) continue
      const l = this.live(kept.l, w)
      const r = this.live(kept.r, w)
      const next = l.length + r.length === 0 ? undefined : { l, r, m: kept.m }
      const bytes = cost(key, next)
      if (bytes > left) {
        // Over the message's bytes: this key and the rest go back, for the next records.
        for (const d of due.slice(i)) lane.index.add(d.end, d.key)
        break
      }
      left -= bytes
      if (next === undefined) {
        st.delete(key)
        removed = true
      } else {
        st.set(key, next)
        lane.index.add(this.firstEnd(next), key)
      }
    }
    return removed
  }

  /** The join's watermark: the smaller side's, −Infinity until both sides have records. */
  private watermark(marks: Marks): number {
    return marks[0] === null || marks[1] === null ? -Infinity : Math.min(marks[0], marks[1]) - this.latenessMs
  }

  /** The records of `list` some record to come may still pair with. */
  private live(list: Kept[], w: number): Kept[] {
    return list.filter((x) => x[0] + this.withinMs >= w)
  }

  /** When a key's first record may go: its earliest event time + `withinMs` (removed once below the watermark). */
  private firstEnd(kept: KeptRecords): number {
    let t = Infinity
    for (const x of kept.l) t = Math.min(t, x[0])
    for (const x of kept.r) t = Math.min(t, x[0])
    return t + this.withinMs
  }
}

/** Refuse a value the join cannot keep: its kept records are JSON in the state. */
export function checkKeepable(value: unknown, where: string): void {
  if (value instanceof Uint8Array)
    throw new InvalidArgumentError(
      `joinStreams() keeps values as JSON in its state: ${where} has a Buffer value (send JSON or strings to joined topics)`,
    )
}
