import { randomBytes } from 'node:crypto'
import { AppendConflictError, ClosedError, LogRollbackError, TopicNotFoundError } from '../../core/errors.js'
import type { IdempotentResult, OutputSource, SourcePosition } from '../backend.js'
import { fencedOutput } from '../source-table.js'
import { SourceHeaders, sourceKey } from '../source-header.js'
import type { AddedHeaders } from '../record-codec.js'
import { MAX_REMEMBERED_IDS, type RecordInput } from '../record.js'
import { encodeParts, packIds, packPositions } from './append-parts.js'
import { byDeadline } from './ack-deadline.js'
import { isConnectionError, redisError, sleep } from './connection.js'
import type { RedisKeys } from './keys.js'
import type { ReplicaAcks } from './replica-acks.js'
import type { Scripts } from './scripts.js'

/** How long a part is retried after connection failures (a restart, a failover) before the append fails. */
const RETRY_FOR_MS = 30_000
/** Longest pause between two tries: short, so a send moves to a promoted replica soon after the promotion. */
const MAX_BACKOFF_MS = 250
/** Parts of one append in flight at once (the script remembers 32 batches per instance). */
const WINDOW = 16
/**
 * With replicaAcks, how long after a window's deadline its commands still have for a reply: the
 * last WAIT slice ends at the deadline, and the master's own answer (how many replicas acknowledged)
 * is the better error than "did not answer in time".
 */
const REPLY_GRACE_MS = 100
/** How long to wait for another instance's multi-part append to finish before giving up. */
const BUSY_WAIT_MS = 15_000

type Part = 'one' | 'first' | 'next' | 'last'

/**
 * Idempotent appends (README, "Redis backend"). Each store instance has its own producer token; every script call
 * carries the next sequence number of (token, partition). The script records the last applied
 * numbers with their base offsets, so a call re-sent after a dropped connection (by ioredis or by
 * the retry below) returns the offsets it got the first time instead of writing again. Appends to
 * one partition from one instance are serialised, so sequence numbers reach Redis in order.
 * With `replicaAcks`, each window of parts is also waited on until that many replicas hold it; a
 * connection lost meanwhile (the master failed over) re-sends the window with the same numbers,
 * which the new master applies if the old one's copy never reached it, or recognises if it did.
 * Such a window settles by its deadline, `replicaAckTimeoutMs` after the backend took the append
 * (decision 179): acknowledged, or rejected with a retriable `TimeoutError` — retries after
 * connection failures included, so a send to a partition whose master failed over settles within
 * that time even when the promoted master has no replica and the old one never comes back.
 */
export class RedisAppender {
  /** Identifies this instance's batches (the clientId alone may be shared by several instances). */
  readonly token: string
  private readonly seqs = new Map<string, number>()
  private readonly tails = new Map<string, Promise<unknown>>()
  /** Per partition, the end after the last offsets this instance was given (decision 113). */
  private readonly told = new Map<string, number>()
  private closed = false

  constructor(
    private readonly scripts: Scripts,
    private readonly keys: RedisKeys,
    clientId: string,
    private readonly acks?: ReplicaAcks,
  ) {
    this.token = `${clientId.replace(/\s/g, '_')}/${randomBytes(6).toString('hex')}`
  }

  /** Append as one contiguous run of offsets; resolves with the first. `expectedEnd`: only at that end (compare-and-append). */
  append(
    topic: string,
    partition: number,
    records: readonly RecordInput[],
    producerId: string,
    maxMessages: number,
    expectedEnd?: number,
  ): Promise<number> {
    const id = `${topic}\0${partition}`
    const takenAt = Date.now()
    // Nothing in flight to this partition: the script call goes now, in this task.
    return this.queue(id, () =>
      this.write(topic, partition, id, records, producerId, maxMessages, expectedEnd, takenAt),
    )
  }

  /**
   * Append records of which some carry an id (`ID_HEADER`): append-ids-7.lua stores each id once per
   * window. Queued behind this instance's other appends to the partition, as `append` is. A call
   * larger than one part (PART_RECORDS / PART_BYTES) is several script calls, one after the other,
   * each atomic: another instance's records may come between two parts.
   */
  appendIdempotent(
    topic: string,
    partition: number,
    records: readonly RecordInput[],
    producerId: string,
    maxMessages: number,
    windowMs: number,
  ): Promise<IdempotentResult[]> {
    const id = `${topic}\0${partition}`
    const takenAt = Date.now()
    return this.queue(id, () =>
      this.writeIds(topic, partition, id, records, producerId, maxMessages, windowMs, takenAt),
    )
  }

  /**
   * Append a processor's outputs (`appendSourced`): append-src-7.lua stores each (source, position)
   * once and fences writers behind the stored lease epoch or past their deadline. Queued behind
   * this instance's other appends to the partition; a call larger than one part is several script
   * calls, each atomic.
   */
  appendSourced(
    topic: string,
    partition: number,
    records: readonly RecordInput[],
    producerId: string,
    maxMessages: number,
    source: OutputSource,
    positions: readonly SourcePosition[],
  ): Promise<IdempotentResult[]> {
    const id = `${topic}\0${partition}`
    const takenAt = Date.now()
    const key = sourceKey(source)
    const keys = [
      ...this.partKeys(topic, partition),
      this.keys.sources(topic, partition),
      this.keys.sourceOutputs(topic, partition, key),
    ] as const
    const deadline = Number.isFinite(source.deadline) ? Math.floor(source.deadline) : ''
    // Each record's SOURCE_HEADER is written as it is encoded: no copy of the record made to hold it.
    const added = SourceHeaders.of(source, positions)
    return this.queue(id, () =>
      this.writeParts(topic, partition, id, records, takenAt, added, (seq, blob, at, n, now) => {
        return this.scripts.call('append-src', keys, [
          this.token,
          seq,
          'one',
          maxMessages,
          producerId,
          now,
          blob,
          key,
          source.epoch,
          source.committed,
          deadline,
          packPositions(positions, at, n),
        ])
      }).catch((e: unknown) => {
        const cause = e instanceof Error && e.cause instanceof Error ? e.cause : e
        const msg = cause instanceof Error ? cause.message : String(cause)
        if (msg.startsWith('FENCED ')) throw fencedOutput(topic, partition, source, msg.slice('FENCED '.length))
        throw e
      }),
    )
  }

  /** Run `go` after this instance's appends to the partition `id` taken before it. */
  private queue<T>(id: string, go: () => Promise<T>): Promise<T> {
    const prev = this.tails.get(id)
    const run = prev === undefined ? go() : prev.then(go, go)
    const tail = run.catch(() => undefined)
    this.tails.set(id, tail)
    void tail.then(() => {
      if (this.tails.get(id) === tail) this.tails.delete(id)
    })
    return run
  }

  private partKeys(topic: string, partition: number) {
    return [
      this.keys.stream(topic, partition),
      this.keys.end(topic, partition),
      this.keys.start(topic, partition),
      this.keys.producers(topic, partition),
      this.keys.reservation(topic, partition),
    ] as const
  }

  private async write(
    topic: string,
    partition: number,
    id: string,
    records: readonly RecordInput[],
    producerId: string,
    maxMessages: number,
    expectedEnd: number | undefined,
    takenAt: number,
  ): Promise<number> {
    if (this.closed) throw new ClosedError(`The Redis backend is closed: cannot append to "${topic}"`)
    if (records.length === 0) throw new Error('append of no records')
    const { parts: chunks, counts } = encodeParts(records)
    const first = (this.seqs.get(id) ?? 0) + 1
    this.seqs.set(id, first + chunks.length - 1)
    const keys = this.partKeys(topic, partition)
    const part = (i: number): Part =>
      chunks.length === 1 ? 'one' : i === 0 ? 'first' : i === chunks.length - 1 ? 'last' : 'next'
    let base = -1
    // At most WINDOW parts in flight: the script remembers the last 32 batches of an instance, so
    // every part a retry re-sends is still recognised.
    for (let from = 0; from < chunks.length; from += WINDOW) {
      const window = chunks.slice(from, from + WINDOW)
      const replies = await this.settle(
        topic,
        partition,
        keys[3],
        from === 0 ? takenAt : undefined,
        first + from + window.length - 1,
        expectedEnd,
        // One pipeline: the calls are issued in one tick and written back to back without waiting for replies.
        (now) =>
          window.map((c, k) =>
            this.scripts.call('append', keys, [
              this.token,
              first + from + k,
              part(from + k),
              maxMessages,
              producerId,
              now,
              c,
              from + k === 0 && expectedEnd !== undefined ? String(expectedEnd) : '',
            ]),
          ),
      )
      if (from === 0) base = Number((replies[0] as (typeof replies)[number])[0])
      // Only offsets now acknowledged count as given (a window whose WAIT failed is sent again).
      replies.forEach((r, k) =>
        this.checkTold(topic, partition, id, Number(r[0]), Number(r[1]) === 1, counts[from + k] as number),
      )
    }
    return base
  }

  /**
   * The parts of an idempotent append (`writeParts`): their sequence numbers, not their ids, make a
   * re-sent part safe (the ids alone would not keep the records without one from being written twice).
   */
  private writeIds(
    topic: string,
    partition: number,
    id: string,
    records: readonly RecordInput[],
    producerId: string,
    maxMessages: number,
    windowMs: number,
    takenAt: number,
  ): Promise<IdempotentResult[]> {
    const keys = [
      ...this.partKeys(topic, partition),
      this.keys.ids(topic, partition),
      this.keys.idsBefore(topic, partition),
    ] as const
    return this.writeParts(topic, partition, id, records, takenAt, undefined, (seq, blob, at, n, now) =>
      this.scripts.call('append-ids', keys, [
        this.token,
        seq,
        'one',
        maxMessages,
        producerId,
        now,
        blob,
        windowMs,
        MAX_REMEMBERED_IDS,
        packIds(records, at, n),
      ]),
    )
  }

  /**
   * The parts of an append whose records may be duplicates (`append-ids`, `append-src`), one
   * script call after another. Each carries the next batch sequence number like an `append` part,
   * so a part re-sent after a dropped connection is recognised and answered as it was the first
   * time. `call` makes a part's script call (records `at .. at + n` of the append, encoded in
   * `blob`); its reply is `{base, applied, then index (from 1) and offset of each duplicate}`.
   */
  private async writeParts(
    topic: string,
    partition: number,
    id: string,
    records: readonly RecordInput[],
    takenAt: number,
    added: AddedHeaders | undefined,
    call: (seq: number, blob: Buffer, at: number, n: number, now: number) => Promise<readonly unknown[]>,
  ): Promise<IdempotentResult[]> {
    if (this.closed) throw new ClosedError(`The Redis backend is closed: cannot append to "${topic}"`)
    const { parts, counts } = encodeParts(records, added)
    const producersKey = this.keys.producers(topic, partition)
    const results: IdempotentResult[] = []
    for (let p = 0, at = 0; p < parts.length; p++) {
      const n = counts[p] as number
      const seq = (this.seqs.get(id) ?? 0) + 1
      this.seqs.set(id, seq)
      const blob = parts[p] as Buffer
      const from = at
      const [r] = await this.settle(
        topic,
        partition,
        producersKey,
        p === 0 ? takenAt : undefined,
        seq,
        undefined,
        (now) => [call(seq, blob, from, n, now)],
      )
      const reply = r as readonly unknown[]
      const base = Number(reply[0])
      const dups = new Map<number, number>()
      for (let j = 2; j + 1 < reply.length; j += 2) dups.set(Number(reply[j]) - 1, Number(reply[j + 1]))
      let stored = 0
      for (let k = 0; k < n; k++) {
        const dup = dups.get(k)
        results.push(
          dup === undefined ? { offset: base + stored++, duplicate: false } : { offset: dup, duplicate: true },
        )
      }
      this.checkTold(topic, partition, id, base, Number(reply[1]) === 1, stored)
      at += n
    }
    return results
  }

  /**
   * Send one window of script calls (all parts of one append, or one part) and wait for their
   * replies, retrying after connection failures and while another instance's multi-part append
   * holds the partition; with replicaAcks, until enough replicas hold the window's last batch.
   * `takenAt`: when the append was taken (its first window), else undefined (the window's turn
   * starts now). `issue` makes the script calls (again on a retry, with the same sequence numbers).
   */
  private async settle<R extends readonly unknown[]>(
    topic: string,
    partition: number,
    producersKey: string,
    takenAt: number | undefined,
    lastSeq: number,
    expectedEnd: number | undefined,
    issue: (now: number) => Array<Promise<R>>,
  ): Promise<R[]> {
    const what = `Append to "${topic}" partition ${partition}`
    const acks = this.acks
    let attempt = 0
    const since = Date.now()
    // With replicaAcks, when this window must have settled: the first one replicaAckTimeoutMs
    // after the append was taken (time spent queued behind earlier appends to the partition
    // counts), a later one after its turn came.
    const ackBy = acks && (takenAt ?? since) + acks.policy.timeoutMs
    const tryWindow = async () => {
      const calls = issue(Date.now())
      const replies = calls.length === 1 ? [await (calls[0] as Promise<R>)] : await Promise.all(calls)
      if (acks && ackBy !== undefined) {
        // The window's last part stands for it: the script applies parts in order, so a node holding it holds them all.
        const mark = {
          field: `${this.token}:${lastSeq % 32}`,
          value: `${lastSeq}:${Number((replies[replies.length - 1] as R)[0])}`,
        }
        await acks.wait(producersKey, mark, what, ackBy)
      }
      return replies
    }
    for (;;) {
      try {
        // Past the deadline (queued too long, or retried up to it): rejected without another try.
        if (acks && ackBy !== undefined && Date.now() >= ackBy) throw acks.late(what)
        return acks && ackBy !== undefined
          ? await byDeadline(tryWindow(), ackBy + REPLY_GRACE_MS, () => acks.late(what))
          : await tryWindow()
      } catch (e) {
        const msg = e instanceof Error ? e.message : String(e)
        if (msg.startsWith('NOTOPIC'))
          throw new TopicNotFoundError(`Topic "${topic}" (partition ${partition}) does not exist`)
        if (msg.startsWith('CONFLICT')) {
          const end = Number(msg.slice('CONFLICT '.length))
          throw new AppendConflictError(
            `Append to "${topic}" partition ${partition} expected its end at ${expectedEnd}, found ${end}: another writer appended first`,
            { end },
          )
        }
        const busy = msg.startsWith('BUSY') || msg.startsWith('SEQGAP')
        const retry = Date.now() - since < (busy ? BUSY_WAIT_MS : RETRY_FOR_MS) && (busy || isConnectionError(e))
        if (!retry || this.closed) throw redisError(`${what} failed`, e)
        attempt++
        const pause = busy ? 2 : Math.min(20 * 2 ** attempt, MAX_BACKOFF_MS)
        await sleep(ackBy === undefined ? pause : Math.max(0, Math.min(pause, ackBy - Date.now())))
      }
    }
  }

  /**
   * Offsets are handed out in increasing order to one instance (its appends to a partition are
   * serialised, others' only move the end on): a new batch below the end this instance was given
   * before means the log moved back, and those offsets are handed out again. Reported once per
   * rollback as a process warning (a producer has no error channel); the send succeeds.
   */
  private checkTold(topic: string, partition: number, id: string, base: number, duplicate: boolean, n: number): void {
    const told = this.told.get(id) ?? 0
    if (!duplicate && base < told)
      process.emitWarning(
        new LogRollbackError(
          topic,
          partition,
          base,
          told - 1,
          `a producer (instance ${this.token}), which was given them`,
        ),
      )
    this.told.set(id, duplicate ? Math.max(told, base + n) : base + n)
  }

  /** Forget the offsets given for a topic (this instance deleted it). */
  forget(topic: string): void {
    for (const id of this.told.keys()) if (id.startsWith(`${topic}\0`)) this.told.delete(id)
  }

  /** Refuse further appends (those under way finish). */
  close(): void {
    this.closed = true
  }
}
