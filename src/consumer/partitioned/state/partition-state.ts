import type { PreparedRecord } from '../../../producer/send-record.js'
import type { Outputs } from '../outputs.js'
import type { OwnedPartition } from '../owned-partition.js'
import type { PartitionHandle } from '../partition-message.js'
import { StateFlush, type FlushMember, type FlushWrite, type LoggedKeys } from './state-flush.js'
import { LAST_MARK } from './state-key.js'
import { flushWrite } from './state-store.js'

/** A write of a message: its key, the value (`null`: a delete) and its changelog record, checked when it was made (or encoded when flushed). */
export interface StateWrite extends FlushWrite {
  readonly key: string
  readonly by: StatefulMessage
}

/** A message of a stateful partition, as its state sees it (`ProcessorMessageImpl`). */
export interface StatefulMessage extends FlushMember {
  readonly offset: number
  /**
   * What its partition's state keeps of it, on the message (no map keyed by messages): valid while
   * `stateTag` is the state's tag for its current generation. Its writes, the last one per key
   * (`stateCount` of them: the first key's in `stateFirst`, any others in `stateRest`, so a
   * message that writes one key needs no map), their bytes, and whether it was acked with its
   * outputs stored (it flushes in its turn).
   */
  stateTag: object | undefined
  stateCount: number
  stateFirst: StateWrite | undefined
  stateRest: Map<string, StateWrite> | undefined
  stateBytes: number
  stateReady: boolean
  /**
   * Acked as carried (`windowed()`'s runs, decision 227): its writes are made by a later message
   * of the partition, so when its turn comes with none of its own it is not acked at once but
   * joins the flush of the next message that writes (`PartitionState.carry`).
   */
  stateCarried: boolean
  /** Its turn came (every earlier message of the partition is flushed): write its state changes, if it has any (through `state.flush`), then ack. */
  flushState(hasWrites: boolean, state: PartitionState): void
}

/** The changelog a partition's flushes go to (`ProcessorState`): its topic, how a write is encoded, and who is told of a failed flush. */
export interface FlushTarget {
  readonly topic: string
  prepare(outputs: Outputs, key: string, value: unknown, partition: number): PreparedRecord
  failed(e: unknown): void
}

/**
 * The keys a changelog partition may hold a value for, over the partition's `flushed` state: a key
 * `flushed` holds (restored, or applied from a stored call), or one a call carrying a value of it
 * was sealed for since, until a call deleting it is stored. `flushed` alone would not do: a call
 * stored while its partition was rewound is not applied to it (its messages come again), yet the
 * changelog holds its values. Nothing is copied at a restore.
 */
function loggedKeys(flushed: ReadonlyMap<string, unknown>): LoggedKeys {
  const sealed = new Set<string>()
  return {
    has: (key) => flushed.has(key) || sealed.has(key),
    add: (key) => void sealed.add(key),
    delete: (key) => void sealed.delete(key),
  }
}

/**
 * The state of one input partition of a stateful processor (README "State stores"): `flushed`, what
 * the acked messages left (restored from the changelog, then each acked message's writes), and an
 * overlay of the writes of the messages handed out since, which later messages read. A message's
 * writes go to the changelog in one call once it is acked and its outputs are stored, and only
 * when every earlier message of the partition went before (`queue`): so the changelog's highest
 * source offset is an input before which everything is done. A rewind or seek (a new generation of
 * the partition) drops the overlay and the queue: the messages come again and write again.
 */
export class PartitionState {
  readonly flushed: Map<string, unknown>
  /** The keys the partition's changelog may hold a value for (`StateFlush`, decision 228). */
  readonly logged: LoggedKeys
  /** The last write of each key since `flushed` (`null` value: deleted), with the message that made it. */
  private readonly overlay = new Map<string, StateWrite>()
  /** The tag of this generation's messages (`StatefulMessage.stateTag`): a new one for each generation. */
  private tag: object = {}
  /** Messages of this generation with writes not yet stored. */
  private writers = 0
  /**
   * The messages fetched in this generation, in offset order, from `head` on those not yet flushed
   * (the slots before it are emptied as they are flushed: a flushed message is not kept alive here).
   */
  private queue: Array<StatefulMessage | undefined> = []
  private head = 0
  /** Carried messages whose turn came (`carry`), with their tokens: they join the next flush of writes. */
  private carried: Array<StatefulMessage | undefined> = []
  private carriedTokens: number[] = []
  /** How many of `carried` (and `carriedTokens`) are held: the arrays are reused from flush to flush, not grown anew. */
  private carriedN = 0
  /** The flush the next flushed message's writes join, until its lane takes it. */
  private open: StateFlush | undefined
  private generation: number
  /** No longer its store's (the partition was dropped, or the store closed): messages that kept it look again. */
  retired = false

  constructor(
    readonly part: OwnedPartition,
    flushed: Map<string, unknown>,
  ) {
    this.flushed = flushed
    this.logged = loggedKeys(flushed)
    this.generation = part.generation
  }

  /** Start over if the partition did (rewind, seek): the overlay and the queue are of messages that come again. */
  private current(): void {
    if (this.generation === this.part.generation) return
    this.generation = this.part.generation
    this.overlay.clear()
    this.tag = {}
    this.writers = 0
    this.open = undefined
    this.queue = []
    this.head = 0
    this.carried = []
    this.carriedTokens = []
    this.carriedN = 0
  }

  /** Messages read (in offset order) of generation `generation`. */
  fetched(msgs: readonly StatefulMessage[], generation: number): void {
    this.current()
    if (generation !== this.generation) return
    for (const m of msgs) this.queue.push(m)
  }

  get(key: string): unknown {
    this.current()
    const o = this.overlay.get(key)
    const v = o === undefined ? this.flushed.get(key) : o.value
    return v === null ? undefined : v
  }

  has(key: string): boolean {
    return this.get(key) !== undefined
  }

  /** `write.value` null: delete. Ignored for a message of an older generation (it is delivered again). */
  write(m: StatefulMessage, generation: number, key: string, write: StateWrite): void {
    this.current()
    if (generation !== this.generation) return
    this.overlay.set(key, write)
    if (m.stateTag !== this.tag || m.stateCount === 0) {
      // Its first write in this generation (a message writes only before it is acked: not ready).
      m.stateTag = this.tag
      m.stateReady = false
      m.stateCount = 1
      m.stateFirst = write
      m.stateRest = undefined
      m.stateBytes = write.bytes
      this.writers++
      return
    }
    const first = m.stateFirst as StateWrite
    if (first.key === key) {
      m.stateBytes += write.bytes - first.bytes
      m.stateFirst = write
      return
    }
    const rest = (m.stateRest ??= new Map())
    const had = rest.get(key)
    if (had === undefined) m.stateCount++
    m.stateBytes += write.bytes - (had?.bytes ?? 0)
    rest.set(key, write)
  }

  /** The write `m` made of `key`, if any (this generation). */
  writeOf(m: StatefulMessage, key: string): StateWrite | undefined {
    this.current()
    if (m.stateTag !== this.tag || m.stateCount === 0) return undefined
    const first = m.stateFirst as StateWrite
    return first.key === key ? first : m.stateRest?.get(key)
  }

  /** How many keys `m` wrote so far (this generation). */
  writesOf(m: StatefulMessage): number {
    this.current()
    return m.stateTag === this.tag ? m.stateCount : 0
  }

  /** The bytes of `m`'s writes so far (this generation). */
  bytesOf(m: StatefulMessage): number {
    this.current()
    return m.stateTag === this.tag && m.stateCount > 0 ? m.stateBytes : 0
  }

  /** Every key and value, the overlay over what is flushed (deleted keys left out). */
  *entries(): IterableIterator<[string, unknown]> {
    this.current()
    for (const [k, o] of this.overlay) if (o.value !== null) yield [k, o.value]
    for (const [k, v] of this.flushed) if (!this.overlay.has(k)) yield [k, v]
  }

  /** The number of keys with a value. */
  get size(): number {
    this.current()
    let n = this.flushed.size
    for (const [k, o] of this.overlay) {
      const had = this.flushed.has(k)
      if (o.value === null && had) n--
      else if (o.value !== null && !had) n++
    }
    return n
  }

  /** `m` (of generation `generation`) was acked and its outputs are stored: flush it in its turn. */
  done(m: StatefulMessage, generation: number): void {
    this.current()
    if (generation !== this.generation) return
    if (m.stateTag !== this.tag) {
      m.stateTag = this.tag
      m.stateCount = 0
    }
    m.stateReady = true
    while (this.head < this.queue.length) {
      const next = this.queue[this.head] as StatefulMessage
      if (next.stateTag !== this.tag || !next.stateReady) break
      next.stateReady = false
      this.queue[this.head++] = undefined
      next.flushState(next.stateCount > 0, this)
    }
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head)
      this.head = 0
    }
  }

  /**
   * Flushed message `m`'s writes, numbered from `seq`, join the partition's open flush (a new one,
   * queued on the changelog's lane, when there is none or they would not fit), with a mark when
   * they are all deletes (compaction removes tombstones; the mark keeps naming the message); `m`
   * is told with `token` once the flush is stored or failed. Returns the numbers it used.
   */
  flush(
    m: StatefulMessage,
    token: number,
    seq: number,
    h: PartitionHandle,
    store: FlushTarget,
    outputs: Outputs,
  ): number {
    const first = m.stateFirst as StateWrite
    const rest = m.stateRest
    const partition = this.part.partition
    let deletes = first.value === null ? 1 : 0
    if (rest !== undefined) for (const w of rest.values()) if (w.value === null) deletes++
    const mark =
      deletes === m.stateCount ? flushWrite(store.prepare(outputs, LAST_MARK, 1, partition), 1, m) : undefined
    let f = this.open
    const fresh = f === undefined || f.sealed || !f.fits(first, rest, mark)
    if (fresh)
      this.open = f = new StateFlush(
        h,
        (k, v) => store.prepare(outputs, k, v, partition),
        (e) => store.failed(e),
        this.logged,
      )
    const flush = f as StateFlush
    // The carried messages before it go with its writes, in input order (decision 227).
    const n = this.carriedN
    if (n > 0) {
      flush.joinAll(this.carried as readonly StatefulMessage[], this.carriedTokens, n)
      this.carried.fill(undefined, 0, n)
      this.carriedN = 0
    }
    const from = seq
    flush.write(first.key, first, seq++)
    if (rest !== undefined) for (const w of rest.values()) flush.write(w.key, w, seq++)
    if (mark !== undefined) flush.write(LAST_MARK, mark, seq++)
    flush.join(m, token)
    if (fresh) outputs.queueFlush(store.topic, partition, flush)
    return seq - from
  }

  /**
   * Carried message `m` (of the current generation) had its turn: it is told with `token` once the
   * flush of the next message's writes is stored or failed, and acked only then.
   */
  carry(m: StatefulMessage, token: number): void {
    this.carried[this.carriedN] = m
    this.carriedTokens[this.carriedN++] = token
  }

  /**
   * Nothing of the partition is pending: every message fetched in this generation was flushed and
   * its writes are stored (what a timer turn needs to run between two inputs; decision 208).
   */
  quiet(): boolean {
    this.current()
    return this.head === this.queue.length && this.writers === 0 && this.carriedN === 0
  }

  /** A timer turn's writes (`null`: a delete), stored in the changelog: what is flushed now. */
  applyTurn(writes: ReadonlyMap<string, unknown>): void {
    for (const [k, v] of writes) {
      if (v === null) this.flushed.delete(k)
      else this.flushed.set(k, v)
    }
  }

  /** `m`'s writes are stored in the changelog (it is being acked): they are what is flushed now. */
  applied(m: StatefulMessage): void {
    this.current()
    if (m.stateTag !== this.tag || m.stateCount === 0) return
    this.apply(m, m.stateFirst as StateWrite)
    if (m.stateRest !== undefined) for (const w of m.stateRest.values()) this.apply(m, w)
    m.stateCount = 0
    m.stateFirst = undefined
    m.stateRest = undefined
    this.writers--
  }

  private apply(m: StatefulMessage, w: StateWrite): void {
    if (w.value === null) this.flushed.delete(w.key)
    else this.flushed.set(w.key, w.value)
    if (this.overlay.get(w.key)?.by === m) this.overlay.delete(w.key)
  }
}
