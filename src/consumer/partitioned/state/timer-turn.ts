import type { Key } from '../../../core/types.js'
import type { OutputMetadata, OutputOf, OutputOptions } from '../output-record.js'
import type { Outputs } from '../outputs.js'
import type { PartitionHandle } from '../partition-message.js'
import type { PartitionState } from './partition-state.js'
import type { PreparedRecord } from '../../../producer/send-record.js'
import { decodeStateKey, encodeStateKey } from './state-key.js'
import { StateFlush } from './state-flush.js'
import { flushWrite, type StateStore } from './state-store.js'

/**
 * The first sequence number of a timer turn's outputs and writes (decision 208). A message's own
 * outputs are numbered below it (a message may send up to `TIMER_SEQ - 1`); a dead letter is
 * `2^31 - 1`, above every turn's (dead letters never go to a changelog).
 */
export const TIMER_SEQ = 2 ** 30

/**
 * The input a changelog record shows to be done, from its source position: its own input, or,
 * for a timer turn's record (`seq` at or past `TIMER_SEQ`), the input before the one it is named
 * after (a turn runs between two inputs and is named after the next).
 */
export const doneThrough = (offset: number, seq: number): number => (seq >= TIMER_SEQ ? offset - 1 : offset)

/** What a turn needs of its state store (`ProcessorState`): its changelog and how a write is encoded for it. */
export interface Changelog {
  readonly topic: string
  prepare(outputs: Outputs, key: string, value: unknown, partition: number): PreparedRecord
}

/** A turn's outputs are settled through their promises: it needs nothing per output. */
const noTally = (): void => undefined

/**
 * A turn of an input partition between two of its inputs, not caused by a message: a timer's
 * (decision 208; `windowed()` closing windows on an idle partition). It runs only while every
 * message the partition handed out is flushed (`PartitionState.quiet()`), reads the partition's
 * state as a message does, and writes it and sends outputs as an input would: each is named after
 * the partition's next input (`offset`, its position) with a sequence number from `seq` (at or
 * past `TIMER_SEQ`), so the output rule (decision 190) stores each once however often the turn is
 * taken again; the turn's owner keeps the numbers it used in the state, as part of its writes.
 * `commit()` stores the writes so far in one atomic changelog call and only then applies them.
 */
export class TimerTurn implements StateStore {
  private readonly writes = new Map<string, unknown>()

  constructor(
    private readonly store: Changelog,
    private readonly outputs: Outputs,
    private readonly state: PartitionState,
    private readonly h: PartitionHandle,
    /** The input it is named after: the partition's next one. */
    readonly offset: number,
    /** The next sequence number it uses. */
    public seq: number,
  ) {}

  /** The sequence number after the writes made so far are committed, and `more` keys not written yet. */
  seqAfterCommit(more: number): number {
    return this.seq + this.writes.size + more
  }

  /** Whether the turn wrote `key` (not committed yet). */
  wrote(key: Key): boolean {
    return this.writes.has(encodeStateKey(key))
  }

  get<T = unknown>(key: Key): T | undefined {
    const k = encodeStateKey(key)
    const v = this.writes.has(k) ? this.writes.get(k) : this.state.get(k)
    return (v === null ? undefined : v) as T | undefined
  }

  has(key: Key): boolean {
    return this.get(key) !== undefined
  }

  set(key: Key, value: unknown): void {
    this.writes.set(encodeStateKey(key), value)
  }

  delete(key: Key): void {
    this.writes.set(encodeStateKey(key), null)
  }

  get size(): number {
    let n = 0
    for (const _ of this.entries()) n++
    return n
  }

  *entries<T = unknown>(): IterableIterator<[Key, T]> {
    for (const [k, v] of this.writes) if (v !== null) yield [decodeStateKey(k), v as T]
    for (const [k, v] of this.state.entries()) if (!this.writes.has(k)) yield [decodeStateKey(k), v as T]
  }

  /** An output of the turn, numbered next. */
  send(topic: string, key: Key, value: unknown, options?: OutputOptions): Promise<OutputMetadata> {
    const of: OutputOf = { offset: this.offset, outputDone: noTally }
    const seq = this.seq++
    return new Promise<OutputMetadata>((resolve, reject) =>
      this.outputs.emit(of, this.h, seq, 0, topic, key, value, options, resolve, reject),
    )
  }

  /**
   * Store the writes made since the last commit in one atomic call to the changelog (numbered
   * next, in the order first written), then apply them to the partition's state.
   * @throws what storing them throws (`FencedError` once the partition is not this member's):
   * nothing is applied then.
   */
  async commit(): Promise<void> {
    if (this.writes.size === 0) return
    const partition = this.h.part.partition
    const encode = (k: string, v: unknown): PreparedRecord => this.store.prepare(this.outputs, k, v, partition)
    const flush = new StateFlush(this.h, encode, undefined, this.state.logged)
    // Encoded now: a turn's writes are few, and a failure is the turn's own.
    const by = { offset: this.offset }
    for (const [k, v] of this.writes) flush.write(k, flushWrite(encode(k, v), v, by), this.seq++)
    await new Promise<void>((resolve, reject) => {
      flush.join({ outputDone: (_token, failure) => (failure === undefined ? resolve() : reject(failure)) }, 0)
      this.outputs.queueFlush(this.store.topic, partition, flush)
    })
    this.state.applyTurn(this.writes)
    this.writes.clear()
  }
}
