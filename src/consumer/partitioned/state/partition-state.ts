import type { PreparedRecord } from '../../../producer/send-record.js'
import type { OwnedPartition } from '../owned-partition.js'

/** A write of a message: the value (`null`: a delete) and its changelog record, checked when it was made. */
export interface StateWrite {
  value: unknown
  rec: PreparedRecord
  /** What it counts against `MAX_STATE_BYTES`. */
  bytes: number
}

/** A message of a stateful partition, as its state sees it (`ProcessorMessageImpl`). */
export interface StatefulMessage {
  readonly offset: number
  /** Its turn came (every earlier message of the partition is flushed): write its state changes (`writes`), then ack. */
  flushState(writes: ReadonlyMap<string, StateWrite> | undefined): void
}

/** A write of the overlay: the value (`null`: deleted) and the message that wrote it last. */
interface Overlaid {
  value: unknown
  by: StatefulMessage
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
  private readonly overlay = new Map<string, Overlaid>()
  /** Each message's own writes (last one per key), until it is flushed. */
  private readonly writes = new Map<StatefulMessage, Map<string, StateWrite>>()
  /** Each message's writes' bytes (the last write per key). */
  private readonly bytes = new Map<StatefulMessage, number>()
  /** The messages fetched in this generation not yet flushed, in offset order. */
  private queue: StatefulMessage[] = []
  private head = 0
  private readonly ready = new Set<StatefulMessage>()
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
    this.writes.clear()
    this.bytes.clear()
    this.ready.clear()
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
    this.overlay.set(key, { value: write.value, by: m })
    let w = this.writes.get(m)
    if (w === undefined) this.writes.set(m, (w = new Map()))
    this.bytes.set(m, (this.bytes.get(m) ?? 0) - (w.get(key)?.bytes ?? 0) + write.bytes)
    w.set(key, write)
  }

  /** The write `m` made of `key`, if any (this generation). */
  writeOf(m: StatefulMessage, key: string): StateWrite | undefined {
    this.current()
    return this.writes.get(m)?.get(key)
  }

  /** How many keys `m` wrote so far (this generation). */
  writesOf(m: StatefulMessage): number {
    this.current()
    return this.writes.get(m)?.size ?? 0
  }

  /** The bytes of `m`'s writes so far (this generation). */
  bytesOf(m: StatefulMessage): number {
    this.current()
    return this.bytes.get(m) ?? 0
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
    this.ready.add(m)
    while (this.head < this.queue.length) {
      const next = this.queue[this.head] as StatefulMessage
      if (!this.ready.has(next)) break
      this.ready.delete(next)
      this.head++
      next.flushState(this.writes.get(next))
    }
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head)
      this.head = 0
    }
  }

  /**
   * Nothing of the partition is pending: every message fetched in this generation was flushed and
   * its writes are stored (what a timer turn needs to run between two inputs; decision 208).
   */
  quiet(): boolean {
    this.current()
    return this.head === this.queue.length && this.writes.size === 0
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
    const w = this.writes.get(m)
    if (w === undefined) return
    this.writes.delete(m)
    this.bytes.delete(m)
    for (const [k, { value: v }] of w) {
      if (v === null) this.flushed.delete(k)
      else this.flushed.set(k, v)
      if (this.overlay.get(k)?.by === m) this.overlay.delete(k)
    }
  }
}
