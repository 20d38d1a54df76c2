import { InvalidArgumentError } from '../../core/errors.js'
import type { IdempotentResult } from '../backend.js'
import type { RecordInput } from '../record.js'
import type { PartitionAppender } from './appender.js'
import { IdTable, type IdSource } from './id-table.js'
import type { FilePartitionReader } from './reader.js'

/** How `IdAppends` reaches the store: a partition's appender, a reader, a time seek. */
export interface IdAppendsHost {
  /** Run `write` on the partition's appender (as the store's appends do: tails woken, retention applied). */
  appendVia(topic: string, partition: number, write: (a: PartitionAppender) => Promise<number>): Promise<number>
  openRawReader(topic: string, partition: number, from: number): Promise<FilePartitionReader>
  offsetForTime(topic: string, partition: number, time: number): Promise<number>
}

/** The longest window accepted: a window longer than a day would make the first send of a process read a day of records. */
export const MAX_WINDOW_MS = 24 * 60 * 60 * 1000

/** `windowMs` checked: a positive integer of at most a day. */
export function checkWindow(windowMs: number): number {
  if (!Number.isInteger(windowMs) || windowMs < 1 || windowMs > MAX_WINDOW_MS)
    throw new InvalidArgumentError(
      `dedupWindowMs must be an integer from 1 to ${MAX_WINDOW_MS} (a day), got ${String(windowMs)}`,
    )
  return windowMs
}

/**
 * The file backend's idempotent appends (`TopicStore.appendIdempotent`): one `IdTable` per
 * partition this process sent ids to, read from the log and decided on under the partition lock.
 */
export class IdAppends {
  private readonly tables = new Map<string, IdTable>()

  constructor(private readonly host: IdAppendsHost) {}

  async append(
    topic: string,
    partition: number,
    records: readonly RecordInput[],
    producerId: string,
    windowMs: number,
  ): Promise<IdempotentResult[]> {
    checkWindow(windowMs)
    const key = `${topic}\0${partition}`
    let table = this.tables.get(key)
    if (table === undefined) {
      const reader = await this.host.openRawReader(topic, partition, 0)
      const source: IdSource = {
        next: (max) => reader.readRawNow(max),
        seek: (offset) => reader.seek(offset),
        close: () => void reader.close().catch(() => undefined),
      }
      // Another call may have made it meanwhile.
      table = this.tables.get(key) ?? new IdTable(source)
      if (this.tables.get(key) === undefined) this.tables.set(key, table)
      else source.close()
    }
    const now = Date.now()
    // The first records the window covers (found before the lock: a time seek reads the index).
    const from = now - windowMs
    const startAt = table.covers(from) ? undefined : await this.host.offsetForTime(topic, partition, from)
    let plan: ReturnType<IdTable['decide']> | undefined
    let stored: IdempotentResult[] | undefined
    const t = table
    await this.host.appendVia(topic, partition, async (a) => {
      const written = await a.appendChosen((end) => {
        if (startAt !== undefined) t.start(startAt, from)
        // A log that moved back (the topic deleted and created again) is read again from the window's start.
        else if (!t.syncTo(end)) t.start(0, from)
        t.syncTo(end)
        plan = t.decide(records, Date.now(), windowMs)
        return plan.fresh
      }, producerId)
      const p = plan as NonNullable<typeof plan>
      stored = written.base === undefined ? t.unchanged(p) : t.stored(p, written.base, Date.now())
      return written.base ?? -1
    })
    return stored as IdempotentResult[]
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
