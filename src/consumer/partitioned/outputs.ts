import type { Backend, OutputSource, TopicMeta } from '../../backends/backend.js'
import { ClosedError, FencedError, TopicNotFoundError, TwainError } from '../../core/errors.js'
import type { Partitioner } from '../../core/hash64.js'
import type { Key } from '../../core/types.js'
import type { TypeCheck } from '../../producer/prepare.js'
import type { PreparedRecord } from '../../producer/send-record.js'
import {
  leftToAck,
  OutputRecord,
  reportedFailure,
  type OutputMetadata,
  type OutputOf,
  type OutputOptions,
  type OutputReject,
  type OutputResolve,
} from './output-record.js'
import type { PartitionedLedger } from './ledger.js'
import { rewoundFrom, type OwnedPartition, type RewoundFrom } from './owned-partition.js'
import { current, type PartitionHandle } from './partition-message.js'
import type { StateFlush } from './state/state-flush.js'
import { OutputPreparers } from './output-preparers.js'

/** Most outputs in one store call (the Redis backend splits larger calls into parts itself). */
const MAX_CALL = 5000
/** Outputs queued on a lane waiting for its turn that end the wait when they come in a burst (`Outputs.queue`). */
const BURST_OUTPUTS = 64
/** Longest pause between two tries of an output write after a retriable failure. */
const MAX_BACKOFF_MS = 1000
/** Pause before an input partition is read again after one of its outputs failed for good. */
const REWIND_DELAY_MS = 1000

/** An output stored: its message told, then its promise. */
function stored(it: OutputRecord, r: OutputMetadata): void {
  it.m.outputDone(it.token, undefined)
  it.resolve(r)
}

/** An output that will not be stored: its message told, then its promise (handled: the message acts on it). */
function failed(it: OutputRecord, e: unknown): void {
  it.m.outputDone(it.token, e)
  leftToAck(it.sent)
  it.reject(e)
}

/** The outputs to one partition of one topic, written one store call at a time (each input partition's in the order they were sent). */
interface Lane {
  topic: string
  partition: number
  queue: OutputRecord[]
  busy: boolean
  /** While the lane waits for its turn of the event loop before a call: ends the wait. */
  wake: (() => void) | undefined
}

/** A state changelog's partition: its flushes, written one call each, in the order they were queued. */
interface FlushLane {
  topic: string
  partition: number
  queue: StateFlush[]
  busy: boolean
}

/** What `lane` holds queued of input partition `part`, taken off it (the rest stay, in order). */
function takeOf<T extends { readonly h: PartitionHandle }>(lane: { queue: T[] }, part: OwnedPartition): T[] {
  const taken: T[] = []
  const rest: T[] = []
  for (const x of lane.queue) (x.h.part === part ? taken : rest).push(x)
  lane.queue = rest
  return taken
}

/** A failure a call is tried again after (unchanged: the store recognises what it already stored). */
const retriable = (e: unknown): boolean => e instanceof TwainError && e.retriable && !(e instanceof FencedError)

/** The pause before try `attempt` + 1 of a call. */
const backoff = (attempt: number): Promise<unknown> =>
  new Promise((r) => setTimeout(r, Math.min(50 * 2 ** attempt, MAX_BACKOFF_MS)))

/** The rejection of an output dropped by its message's `nack()`. */
const discarded = (): TwainError => new TwainError(`Output dropped: its message was nacked`, { code: 'ERR_DISCARDED' })

/**
 * Whether `rec`, just queued, comes in a burst: the output queued before it is of another message
 * that may still send (not acked). That is a batch being processed, every message's outputs sent
 * before any message is acked, in one task: its calls need not wait for the event loop's next turn
 * to gather it (and its messages, holding the member's in-flight window until their outputs are
 * stored, need not wait either). A `for await` loop acks each message before the next one sends.
 */
function inBurst(queue: readonly OutputRecord[], rec: OutputRecord): boolean {
  const prev = queue[queue.length - 2] as OutputRecord
  return prev.m !== rec.m && prev.m.isOpen?.() === true
}

/** The partition a message was read from is still this member's, and not being handed over. */
const holds = (part: OwnedPartition): boolean => !part.lost && !part.dropped && !part.releasing

/**
 * A processor's outputs (docs/format.md, "Exactly-once outputs"). Each output is checked and
 * encoded as a producer's send is, then queued on its partition's lane; a lane writes its queue
 * one `appendSourced` call at a time, each call the outputs of one input partition in send order
 * (its source: group, input partition, the lease's epoch, the input's committed offset, the
 * session's deadline). A call that fails with a retriable error is tried again, unchanged (the
 * store recognises what it already stored), while the input partition is this member's; a later
 * output to the partition waits for it, so an input partition's outputs are stored in the order
 * they were sent. A call that fails for good rewinds its input partition (`PartitionedLedger.rewind`):
 * the messages handed out since are delivered again, after the failed one.
 */
export class Outputs {
  /** Per topic, its partitions' lanes (a lane while it has outputs queued or being written). */
  private readonly lanes = new Map<string, Array<Lane | undefined>>()
  private readonly flushLanes = new Map<string, FlushLane>()
  private readonly metas = new Map<string, TopicMeta>()
  private readonly incarnations = new Map<string, number>()
  private readonly preparers: OutputPreparers
  /** Sends being prepared asynchronously (a topic's configuration, an asynchronous validator): later ones queue behind. */
  private chain: Promise<unknown> | undefined
  /** Outputs on `chain`, not yet queued. */
  private preparing = 0
  private ledger: PartitionedLedger<unknown> | undefined
  private closed = false
  /** How often each message's outputs were discarded (`nack()`): an output prepared across a discard is dropped too. */
  private readonly discards = new WeakMap<OutputOf, number>()

  constructor(
    private readonly store: Backend,
    private readonly group: string,
    private readonly producerId: string,
    private readonly types: TypeCheck,
    partitioner: Partitioner,
  ) {
    this.preparers = new OutputPreparers(partitioner)
  }

  /** The member's ledger (its session deadline). */
  attach(ledger: PartitionedLedger<unknown>): void {
    this.ledger = ledger
  }

  /**
   * Queue an output of `m` (its `seq`-th): `resolve` is called once it is stored (or recognised as
   * stored), `reject` once it will not be; `m` is told first (`outputDone(token, …)`), once,
   * whatever becomes of it. No promise per output: a caller that wants one makes it
   * (`ProcessorMessageImpl.send`, which gives it as `sent`), a result stream's outputs, many per
   * batch, need none.
   */
  emit(
    m: OutputOf,
    h: PartitionHandle,
    seq: number,
    token: number,
    topic: string,
    key: Key,
    value: unknown,
    options: OutputOptions | undefined,
    resolve: OutputResolve,
    reject: OutputReject,
    types: TypeCheck = this.types,
    sent?: Promise<unknown>,
  ): void {
    const rec = new OutputRecord(m, h, seq, token, key, value, options, resolve, reject, sent)
    if (this.closed) return failed(rec, this.closedError())
    const meta = this.metas.get(topic)
    if (this.chain === undefined && meta !== undefined && rec.type === undefined) {
      // The common case, synchronously: the output is queued in the order it was sent.
      try {
        // Without a type it is prepared synchronously, in place: no promise comes back.
        void this.preparers.of(topic, meta, types).send(rec)
      } catch (e) {
        return failed(rec, e)
      }
      return this.queue(topic, rec)
    }
    const discards = this.discards.get(m)
    const prepared = (this.chain ?? Promise.resolve()).then(async () => {
      const known = this.metas.get(topic) ?? (await this.metaOf(topic))
      await this.preparers.of(topic, known, types).send(rec)
    })
    // Queued as soon as prepared (before the next send's preparation starts): the chain holds
    // sends being prepared, not sends being stored, so a lane's next call takes every output queued
    // meanwhile rather than one output per call.
    this.preparing++
    const link = prepared.then(
      () => {
        this.preparing--
        // `nack()` while it was prepared: it was not sent yet, so it is dropped like a queued one.
        if (this.discards.get(m) !== discards) failed(rec, discarded())
        else this.queue(topic, rec)
      },
      (e: unknown) => {
        this.preparing--
        failed(rec, e)
      },
    )
    this.chain = link
    void link.then(() => {
      if (this.chain === link) this.chain = undefined
    })
  }

  /**
   * A record of `topic` checked and encoded now, as `send` would (a state write, checked when it
   * is made and written by its partition's flush: `queueFlush`).
   * @throws what `emit` would reject with for it.
   */
  prepare(topic: string, meta: TopicMeta, item: { key: Key; value: unknown; partition: number }): PreparedRecord {
    this.metas.set(topic, meta)
    const r = this.preparers.of(topic, meta, this.types).item(item) as PreparedRecord
    r.timestamp = Date.now()
    return r
  }

  /**
   * Deliver `h`'s partition again from its first message not acked: an output of a message of it
   * failed (`failure`; see `write`), which is reported (an `'error'` event, `reportedFailure`) as
   * the partition goes back, once per rewind. `from`: that message, whose deliveries count on.
   */
  rewind(h: PartitionHandle, failure: unknown, from?: RewoundFrom): void {
    if (this.closed || !current(h)) return
    this.ledger?.rewind(h.part, REWIND_DELAY_MS, from)
    if (reportedFailure(failure)) this.ledger?.core.emitError(failure)
  }

  private async metaOf(topic: string): Promise<TopicMeta> {
    const meta = await this.store.getTopic(topic)
    this.metas.set(topic, meta)
    return meta
  }

  /** Queue a prepared output of `emit`. */
  private queue(topic: string, rec: OutputRecord): void {
    if (this.closed) return failed(rec, this.closedError())
    let byPartition = this.lanes.get(topic)
    if (byPartition === undefined) this.lanes.set(topic, (byPartition = []))
    let lane = byPartition[rec.partition]
    if (lane === undefined)
      byPartition[rec.partition] = lane = { topic, partition: rec.partition, queue: [], busy: false, wake: undefined }
    lane.queue.push(rec)
    if (!lane.busy) void this.pump(lane)
    else if (lane.wake !== undefined && lane.queue.length >= BURST_OUTPUTS && inBurst(lane.queue, rec)) {
      for (const waiting of this.allLanes()) waiting.wake?.()
    }
  }

  /** What a write given after `close()` is refused with. */
  private closedError(): ClosedError {
    return new ClosedError(`The processor of group "${this.group}" is closed`)
  }

  /** Outputs waiting for their lanes' calls: queued, or being prepared to be. */
  queued(): number {
    let n = this.preparing
    for (const lane of this.allLanes()) n += lane.queue.length
    return n
  }

  /** Every lane there is. */
  private *allLanes(): IterableIterator<Lane> {
    for (const byPartition of this.lanes.values()) for (const lane of byPartition) if (lane !== undefined) yield lane
  }

  /** Drop `m`'s outputs not yet written (`nack()`): they reject. */
  discard(m: OutputOf): void {
    this.discards.set(m, (this.discards.get(m) ?? 0) + 1)
    for (const lane of this.allLanes()) {
      const keep: OutputRecord[] = []
      for (const it of lane.queue) {
        if (it.m === m) failed(it, discarded())
        else keep.push(it)
      }
      lane.queue = keep
    }
  }

  private async pump(lane: Lane): Promise<void> {
    lane.busy = true
    // A turn of the event loop first, not a microtask: the sends made until then go in one call.
    // Deliveries from a buffer, sends and (on the file backend) writes are all microtasks, so one
    // microtask let each call take one or two outputs. A burst ends the wait (`queue`): the rest of
    // it is sent in the same task, before the call is taken (a microtask later).
    await new Promise<void>((resolve) => {
      const turn = setImmediate(() => {
        lane.wake = undefined
        resolve()
      })
      lane.wake = () => {
        clearImmediate(turn)
        lane.wake = undefined
        resolve()
      }
    })
    try {
      while (lane.queue.length > 0) {
        const part = (lane.queue[0] as OutputRecord).h.part
        await this.write(lane, part, this.take(lane, part))
      }
    } finally {
      lane.busy = false
      if (lane.queue.length === 0) (this.lanes.get(lane.topic) as Array<Lane | undefined>)[lane.partition] = undefined
    }
  }

  /**
   * The queued outputs of input partition `part` (at most `MAX_CALL`), in send order, taken off the
   * lane; the others stay queued in send order. A call has one source, and outputs of one input
   * partition are stored in the order they were sent; outputs of different input partitions, which
   * no order binds (their inputs are not ordered either), are not kept in send order among each
   * other: interleaved, they would make a call per run.
   */
  private take(lane: Lane, part: OwnedPartition): OutputRecord[] {
    const q = lane.queue
    let n = 1
    while (n < q.length && n < MAX_CALL && (q[n] as OutputRecord).h.part === part) n++
    if (n === q.length || n === MAX_CALL) return q.splice(0, n)
    const items = q.slice(0, n)
    const rest: OutputRecord[] = []
    for (let i = n; i < q.length; i++) {
      const it = q[i] as OutputRecord
      if (it.h.part === part && items.length < MAX_CALL) items.push(it)
      else rest.push(it)
    }
    lane.queue = rest
    return items
  }

  /** Write one call's outputs (one source), trying again after retriable failures while the partition is this member's. */
  private async write(lane: Lane, part: OwnedPartition, all: OutputRecord[]): Promise<void> {
    let items = all
    let results: Array<{ offset: number; duplicate: boolean }> | undefined
    try {
      results = await this.appendRetrying(lane, part, () => {
        // Outputs of a delivery from before a seek, or of a partition given up, are not written.
        if (!holds(part) || items.some((it) => !current(it.h))) {
          const live: OutputRecord[] = []
          for (const it of items) {
            if (holds(part) && current(it.h)) live.push(it)
            else failed(it, this.fenced(part, 'its partition is no longer this member’s'))
          }
          items = live
          if (items.length === 0) return undefined
        }
        // Stamped now, each try: an output's time is when it is appended (`OutputOptions.timestamp`).
        const now = Date.now()
        for (const it of items) if (it.eventTime === undefined) it.timestamp = now
        return { recs: items, positions: items.map((it) => ({ offset: it.m.offset, seq: it.seq })) }
      })
    } catch (e) {
      const first = items[0]?.m
      const from = first === undefined ? undefined : rewoundFrom(first)
      if (this.failedForGood(lane, part, items, (it) => failed(it, e), from) && reportedFailure(e))
        this.ledger?.core.emitError(e)
      return
    }
    if (results === undefined) return
    items.forEach((it, i) => {
      const r = results[i] as { offset: number; duplicate: boolean }
      stored(
        it,
        r.duplicate
          ? { topic: lane.topic, partition: lane.partition, offset: r.offset, duplicate: true }
          : { topic: lane.topic, partition: lane.partition, offset: r.offset },
      )
    })
  }

  /**
   * A call of input partition `part`'s outputs (or flush) to `lane` failed for good: later ones of
   * the partition would be stored before these, so the partition is delivered again from its first
   * message not acked (after a pause), which makes every message of it handed out since stale; the
   * call's items and the partition's items queued behind them on the lane fail (`from`: the first
   * failing item's message, whose deliveries count on). Whether the partition was sent back (the
   * caller reports the failure then).
   */
  private failedForGood<T extends { readonly h: PartitionHandle }>(
    lane: { queue: T[] },
    part: OwnedPartition,
    failing: readonly T[],
    fail: (x: T) => void,
    from?: RewoundFrom,
  ): boolean {
    const rewound = !this.closed && failing.some((x) => current(x.h))
    if (rewound) this.ledger?.rewind(part, REWIND_DELAY_MS, from)
    for (const x of failing) fail(x)
    for (const x of takeOf(lane, part)) fail(x)
    return rewound
  }

  /**
   * One `appendSourced` call of input partition `part`'s records to `lane`'s partition, tried
   * again (unchanged: the store recognises what it already stored) after retriable failures.
   * Before each try `call()` gives what to write, or undefined to stop (nothing left that is this
   * member's to write): then it resolves undefined. Rejects with a failure for good (or any
   * failure once closed).
   */
  private async appendRetrying(
    lane: { readonly topic: string; readonly partition: number },
    part: OwnedPartition,
    call: () => { recs: PreparedRecord[]; positions: Array<{ offset: number; seq: number }> } | undefined,
  ): Promise<Array<{ offset: number; duplicate: boolean }> | undefined> {
    for (let attempt = 0; ; attempt++) {
      const c = call()
      if (c === undefined) return undefined
      try {
        return await this.store.appendSourced(
          lane.topic,
          lane.partition,
          c.recs,
          this.producerId,
          await this.sourceOf(part),
          c.positions,
        )
      } catch (e) {
        if (e instanceof TopicNotFoundError) this.metas.delete(lane.topic)
        if (!retriable(e) || this.closed) throw e
        await backoff(attempt)
      }
    }
  }

  /** The source of a call of input partition `part`'s outputs: its position's key, lease and session (docs/format.md). */
  private async sourceOf(part: OwnedPartition): Promise<OutputSource> {
    return {
      group: this.group,
      topic: part.topic,
      partition: part.partition,
      incarnation: this.incarnations.get(part.topic) ?? (await this.incarnationOf(part.topic)),
      epoch: part.epoch,
      committed: Math.max(0, part.committed),
      deadline: this.ledger?.sessionDeadline ?? Infinity,
    }
  }

  /**
   * Queue a state flush of changelog `topic`'s `partition` (`StateFlush`): written in one atomic
   * call once its lane takes it (it takes members until then), after the flushes queued before it,
   * tried again after retriable failures while its partition is this member's; a failure for good
   * rewinds its input partition and fails the flushes queued behind it. Its members are told.
   */
  queueFlush(topic: string, partition: number, f: StateFlush): void {
    if (this.closed) return f.settle(this.closedError())
    const id = `${topic}\0${partition}`
    let lane = this.flushLanes.get(id)
    if (lane === undefined) this.flushLanes.set(id, (lane = { topic, partition, queue: [], busy: false }))
    lane.queue.push(f)
    if (!lane.busy) void this.pumpFlushes(lane)
  }

  private async pumpFlushes(lane: FlushLane): Promise<void> {
    lane.busy = true
    // As `pump`: a turn of the event loop first, so the inputs processed until then join the flush.
    await new Promise((r) => setImmediate(r))
    try {
      while (lane.queue.length > 0) await this.writeFlush(lane, lane.queue.shift() as StateFlush)
    } finally {
      lane.busy = false
      if (lane.queue.length === 0) this.flushLanes.delete(`${lane.topic}\0${lane.partition}`)
    }
  }

  private async writeFlush(lane: FlushLane, f: StateFlush): Promise<void> {
    const part = f.h.part
    let written: unknown
    try {
      const sealed = f.seal()
      written = await this.appendRetrying(lane, part, () => (holds(part) && current(f.h) ? sealed : undefined))
    } catch (e) {
      // Its members report the failure (`ProcessorState.failed`).
      this.failedForGood(lane, part, [f], (x) => x.settle(e))
      return
    }
    f.settle(written === undefined ? this.fenced(part, 'its partition is no longer this member’s') : undefined)
  }

  /** An input topic's creation time (its incarnation: one created again is another source). */
  private async incarnationOf(topic: string): Promise<number> {
    const at = (await this.store.getTopic(topic)).createdAt
    this.incarnations.set(topic, at)
    return at
  }

  private fenced(part: OwnedPartition, why: string): FencedError {
    return new FencedError(
      `Output of group "${this.group}" for ${part.topic}/${part.partition} (lease epoch ${part.epoch}) was not stored: ${why}`,
    )
  }

  /** Refuse new outputs; queued ones not yet written reject with `ClosedError` (their messages were not acked). */
  close(): void {
    this.closed = true
    const closed = (): ClosedError =>
      new ClosedError(`The processor of group "${this.group}" closed before this output was written`)
    for (const lane of this.allLanes()) for (const it of lane.queue.splice(0)) failed(it, closed())
    for (const lane of this.flushLanes.values()) for (const f of lane.queue.splice(0)) f.settle(closed())
  }
}
