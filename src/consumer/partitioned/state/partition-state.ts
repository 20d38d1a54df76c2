import type { PreparedRecord } from '../../../producer/send-record.js'
import type { Outputs } from '../outputs.js'
import type { OwnedPartition } from '../owned-partition.js'
import type { PartitionHandle } from '../partition-message.js'
import { StateFlush, type FlushMember, type FlushWrite } from './state-flush.js'
import { LAST_MARK } from './state-key.js'

/** A write of a message: the value (`null`: a delete) and its changelog record, checked when it was made (or encoded when flushed). */
export interface StateWrite extends FlushWrite {
  readonly by: StatefulMessage
}

/** A message of a stateful partition, as its state sees it (`ProcessorMessageImpl`). */
export interface StatefulMessage extends FlushMember {
  readonly offset: number
  /**
   * What its partition's state keeps of it, on the message (no map keyed by messages): valid while
   * `stateTag` is the state's tag for its current generation. Its writes (the last one per key),
   * their bytes, and whether it was acked with its outputs stored (it flushes in its turn).
   */
  stateTag: object | undefined
  stateWrites: Map<string, StateWrite> | undefined
  stateBytes: number
  stateReady: boolean
  /** Its turn came (every earlier message of the partition is flushed): write its state changes (`writes`, through `state.flush`), then ack. */
  flushState(writes: ReadonlyMap<string, StateWrite> | undefined, state: PartitionState): void
}

/** The changelog a partition's flushes go to (`ProcessorState`): its topic, how a write is encoded, and who is told of a failed flush. */
export interface FlushTarget {
  readonly topic: string
  prepare(outputs: Outputs, key: string, value: unknown, partition: number): PreparedRecord
  failed(e: unknown): void
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
  /** The last write of each key since `flushed` (`null` value: deleted), with the message that made it. */
  private readonly overlay = new Map<string, StateWrite>()
  /** The tag of this generation's messages (`StatefulMessage.stateTag`): a new one for each generation. */
  private tag: object = {}
  /** Messages of this generation with writes not yet stored. */
  private writers = 0
  /** The messages fetched in this generation not yet flushed, in offset order. */
  private queue: StatefulMessage[] = []
  private head = 0
  /** The flush the next flushed message's writes join, until its lane takes it. */
  private open: StateFlush | undefined
  private generation: number

  constructor(
    readonly part: OwnedPartition,
    flushed: Map<string, unknown>,
  ) {
    this.flushed = flushed
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
    const w = this.writesOf_(m) ?? this.adopt(m)
    m.stateBytes += write.bytes - (w.get(key)?.bytes ?? 0)
    w.set(key, write)
  }

  /** `m`'s writes in this generation, if any. */
  private writesOf_(m: StatefulMessage): Map<string, StateWrite> | undefined {
    return m.stateTag === this.tag ? m.stateWrites : undefined
  }

  /** `m`'s first write in this generation: it gets an empty set of writes (and is not ready). */
  private adopt(m: StatefulMessage): Map<string, StateWrite> {
    const ready = m.stateTag === this.tag && m.stateReady
    m.stateTag = this.tag
    m.stateReady = ready
    m.stateBytes = 0
    this.writers++
    return (m.stateWrites = new Map())
  }

  /** The write `m` made of `key`, if any (this generation). */
  writeOf(m: StatefulMessage, key: string): StateWrite | undefined {
    this.current()
    return this.writesOf_(m)?.get(key)
  }

  /** How many keys `m` wrote so far (this generation). */
  writesOf(m: StatefulMessage): number {
    this.current()
    return this.writesOf_(m)?.size ?? 0
  }

  /** The bytes of `m`'s writes so far (this generation). */
  bytesOf(m: StatefulMessage): number {
    this.current()
    return m.stateTag === this.tag && m.stateWrites !== undefined ? m.stateBytes : 0
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
      m.stateWrites = undefined
    }
    m.stateReady = true
    while (this.head < this.queue.length) {
      const next = this.queue[this.head] as StatefulMessage
      if (next.stateTag !== this.tag || !next.stateReady) break
      next.stateReady = false
      this.head++
      next.flushState(next.stateWrites, this)
    }
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head)
      this.head = 0
    }
  }

  /**
   * Flushed message `m`'s writes (and its mark, if any), numbered from `seq`, join the partition's
   * open flush (a new one, queued on the changelog's lane, when there is none or they would not
   * fit); `m` is told with `token` once the flush is stored or failed.
   */
  flush(
    m: StatefulMessage,
    token: number,
    seq: number,
    writes: ReadonlyMap<string, StateWrite>,
    mark: FlushWrite | undefined,
    h: PartitionHandle,
    store: FlushTarget,
    outputs: Outputs,
  ): void {
    let f = this.open
    const fresh = f === undefined || f.sealed || !f.fits(writes, mark === undefined ? 0 : 1, mark?.bytes ?? 0)
    if (fresh) {
      const partition = this.part.partition
      this.open = f = new StateFlush(
        h,
        (k, v) => store.prepare(outputs, k, v, partition),
        (e) => store.failed(e),
      )
    }
    const flush = f as StateFlush
    for (const [k, w] of writes) flush.write(k, w, seq++)
    if (mark !== undefined) flush.write(LAST_MARK, mark, seq)
    flush.join(m, token)
    if (fresh) outputs.queueFlush(store.topic, this.part.partition, flush)
  }

  /**
   * Nothing of the partition is pending: every message fetched in this generation was flushed and
   * its writes are stored (what a timer turn needs to run between two inputs; decision 208).
   */
  quiet(): boolean {
    this.current()
    return this.head === this.queue.length && this.writers === 0
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
    const w = this.writesOf_(m)
    if (w === undefined) return
    m.stateWrites = undefined
    this.writers--
    for (const [k, { value: v }] of w) {
      if (v === null) this.flushed.delete(k)
      else this.flushed.set(k, v)
      if (this.overlay.get(k)?.by === m) this.overlay.delete(k)
    }
  }
}
