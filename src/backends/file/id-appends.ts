import type { IdempotentOutcome, IdempotentResult } from '../backend.js'
import { checkIdempotent, ID_HEADER, type RecordInput } from '../record.js'
import type { PartitionAppender } from './appender.js'
import { encodeBatch } from './batch-format.js'
import { outcomeResults } from '../outcome.js'
import { IdTable, type IdPlan, type IdSource } from './id-table.js'
import type { FilePartitionReader } from './reader.js'
import type { NativeTextFrame } from './text-frame.js'

/** How `IdAppends` reaches the store: a partition's appender, a reader, a time seek. */
export interface IdAppendsHost {
  /** Run `write` on the partition's appender (as the store's appends do: tails woken, retention applied). */
  appendVia(topic: string, partition: number, write: (a: PartitionAppender) => Promise<number>): Promise<number>
  openRawReader(topic: string, partition: number, from: number): Promise<FilePartitionReader>
  offsetForTime(topic: string, partition: number, time: number): Promise<number>
}

/**
 * The file backend's idempotent appends (`TopicStore.appendIdempotent`): one `IdTable` per
 * partition this process sent ids to, read from the log and decided on under the partition lock.
 */
export class IdAppends {
  private readonly tables = new Map<string, IdTable>()

  constructor(private readonly host: IdAppendsHost) {}

  /** Idempotent append of records (their ids are their `ID_HEADER` headers). */
  append(
    topic: string,
    partition: number,
    records: readonly RecordInput[],
    producerId: string,
    windowMs: number,
  ): Promise<IdempotentResult[]> {
    checkIdempotent(records, windowMs)
    const ids = records.map((r) => r.headers?.[ID_HEADER])
    let fresh: RecordInput[] = []
    const written = this.decideAndWrite(topic, partition, ids, windowMs, producerId, (keep) => {
      fresh = keep.length === records.length ? (records as RecordInput[]) : keep.map((i) => records[i] as RecordInput)
      return (base) => encodeBatch(fresh, base, producerId)
    })
    return written.then(outcomeResults)
  }

  /** Idempotent append of a frame the producer built (its ids are `frame.ids`). */
  appendFrame(topic: string, partition: number, frame: NativeTextFrame, windowMs: number): Promise<IdempotentOutcome> {
    checkIdempotent([], windowMs) // the frame's ids were checked as they were added (producer/prepare.ts)
    const ids = frame.ids ?? new Array<string | undefined>(frame.count)
    return this.decideAndWrite(topic, partition, ids, windowMs, frame.producerId, (keep) => {
      if (keep.length !== frame.count) frame.keepOnly(keep)
      return (base) => frame.frame(base)
    })
  }

  /**
   * Under the partition lock: read what others appended, choose the records of `ids` to write
   * (`prepare` is given their indexes and returns the frame's encoder), write them as one frame.
   */
  private async decideAndWrite(
    topic: string,
    partition: number,
    ids: ReadonlyArray<string | undefined>,
    windowMs: number,
    producerId: string,
    prepare: (keep: number[]) => (base: number) => Buffer,
  ): Promise<IdempotentOutcome> {
    const table = await this.tableOf(topic, partition)
    const now = Date.now()
    // The first records the window covers (found before the lock: a time seek reads the index).
    const from = now - windowMs
    const startAt = table.covers(from) ? undefined : await this.host.offsetForTime(topic, partition, from)
    let plan: IdPlan | undefined
    let encode: ((base: number) => Buffer) | undefined
    let results: IdempotentOutcome | undefined
    try {
      await this.host.appendVia(topic, partition, async (a) => {
        const base = await a.appendChosen(
          (end) => {
            if (startAt !== undefined) table.start(startAt, from)
            // A log that moved back (the topic deleted and created again) is read again from the window's start.
            else if (!table.syncTo(end, windowMs)) table.start(0, from)
            table.syncTo(end, windowMs)
            plan = table.decide(ids, Date.now(), windowMs)
            encode = prepare(plan.fresh)
            return plan.fresh.length
          },
          (b) => (encode as (base: number) => Buffer)(b),
          producerId,
          // Right after the write, still under the lock: the next decision sees these ids stored.
          (b) => void (results = table.stored(plan as IdPlan, b, Date.now())),
        )
        return base ?? -1
      })
    } catch (e) {
      if (plan !== undefined) table.abandon(plan)
      throw e
    }
    return results ?? table.unchanged(plan as IdPlan)
  }

  private async tableOf(topic: string, partition: number): Promise<IdTable> {
    const key = `${topic}\0${partition}`
    const had = this.tables.get(key)
    if (had !== undefined) return had
    const reader = await this.host.openRawReader(topic, partition, 0)
    const source: IdSource = {
      next: (max) => reader.readRawNow(max),
      seek: (offset) => reader.seek(offset),
      close: () => void reader.close().catch(() => undefined),
    }
    // Another call may have made one meanwhile.
    const now = this.tables.get(key)
    if (now !== undefined) {
      source.close()
      return now
    }
    const table = new IdTable(source)
    this.tables.set(key, table)
    return table
  }

  /** Forget the tables of a topic (deleted, or created again by another process). */
  forgetTopic(topic: string): void {
    for (const [key, table] of this.tables) {
      if (key.startsWith(`${topic}\0`)) {
        table.close()
        this.tables.delete(key)
      }
    }
  }

  close(): void {
    for (const t of this.tables.values()) t.close()
    this.tables.clear()
  }
}
