import { readFileSync, renameSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { IdempotentResult, OutputSource, SourcePosition } from '../backend.js'
import type { RecordInput } from '../record.js'
import { checkSourced, fencedOutput, SourceTable, type SourceState } from '../source-table.js'
import { parseSourceHeader, SOURCE_HEADER, SourceHeaders, sourceKey } from '../source-header.js'
import type { PartitionAppender } from './appender.js'
import type { IdAppendsHost } from './id-appends.js'
import type { FilePartitionReader } from './reader.js'

/** The checkpoint of a partition's source table, beside its segments. */
export const SOURCES_FILE = 'sources.json'
/**
 * Records read into a table since its last checkpoint before it writes another: this many, or four
 * times the inputs the table holds if more (a checkpoint writes the whole table: a count of records
 * in proportion keeps its cost per record a fraction of an entry's, where a fixed count made each
 * record pay for several entries when many inputs waited for their commit).
 */
const CHECKPOINT_EVERY = 4096
const CHECKPOINT_PER_ENTRY = 4
/** Or this long since the last one (ms), whichever comes first. */
const CHECKPOINT_MS = 1000

/** How `SourceAppends` reaches the store: as `IdAppends` does, plus where a partition's directory is. */
export interface SourceAppendsHost extends Pick<IdAppendsHost, 'appendVia' | 'openRawReader'> {
  partitionDir(topic: string, partition: number): string
}

/**
 * One partition's source table as this process knows it: a cache of the log (every output carries
 * its source in `SOURCE_HEADER`, written in the same frame), brought up to the log's end under the
 * partition lock before each decision. A checkpoint (`sources.json`: the table and the offset it
 * covers) is written under the lock now and then, before the partition's first output, and when a
 * call that writes nothing changes the table (a new lease's epoch, a commit), so a process that
 * starts reads the log from the checkpoint on, not from its start. A crash between checkpoints
 * leaves an older checkpoint: the log after it is read again.
 */
class PartitionSources {
  table = new SourceTable()
  /** Offsets below this are in the table (-1: the checkpoint not read yet). */
  covered = -1
  private checkpointAt = -1
  private checkpointMs = 0
  /** The checkpoint file as this process last read or wrote it (inode, mtime, size): another process's is read. */
  private seen = ''

  constructor(
    private readonly dir: string,
    private readonly reader: FilePartitionReader,
  ) {}

  /** Bring the table to the log's `end` (under the lock). */
  syncTo(end: number): void {
    if (this.covered < 0 || end < this.covered) this.load(end)
    else if (this.stamp() !== this.seen) this.adopt(end)
    while (this.covered < end) {
      const got = this.reader.readRawNow(4096)
      if (got.length === 0) break
      for (const r of got) {
        const h = r.headers?.[SOURCE_HEADER]
        const p = h === undefined ? undefined : parseSourceHeader(h)
        if (p !== undefined) this.table.observe(p.key, p.epoch, p.committed, p.offset, p.seq, r.offset)
        this.covered = r.offset + 1
      }
    }
    if (this.covered < end) this.covered = end
  }

  /** The checkpoint file's identity now ('' when there is none). */
  private stamp(): string {
    const st = statSync(join(this.dir, SOURCES_FILE), { throwIfNoEntry: false })
    return st === undefined ? '' : `${st.ino}:${st.mtimeMs}:${st.size}`
  }

  /**
   * Another process wrote a checkpoint since this one looked (under the lock, after reading the log
   * to its end then, so at or past what this table covers): it holds what that process decided
   * without writing a record (a new lease's epoch, a commit). Taken whole when it covers at least
   * as much as this table; else kept as it is.
   */
  private adopt(end: number): void {
    const seen = this.stamp()
    const data = this.read()
    this.seen = seen
    if (data === undefined || !Number.isSafeInteger(data.covered) || data.covered < this.covered || data.covered > end)
      return
    try {
      this.table = SourceTable.fromJSON(data.sources)
    } catch {
      return
    }
    this.covered = data.covered
    this.checkpointAt = data.covered
    this.reader.seek(data.covered)
  }

  private read(): { covered: number; sources: unknown } | undefined {
    try {
      return JSON.parse(readFileSync(join(this.dir, SOURCES_FILE), 'utf8')) as { covered: number; sources: unknown }
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') return { covered: 0, sources: [] } // unreadable: read the whole log
      return undefined
    }
  }

  /** Start from the checkpoint; none (no output was ever stored here): empty at `end`. A log that moved back: from its start. */
  private load(end: number): void {
    this.seen = this.stamp()
    const data = this.read()
    if (data === undefined) {
      this.table = new SourceTable()
      this.covered = end
      this.checkpoint(true)
      return
    }
    let table: SourceTable
    try {
      table = SourceTable.fromJSON(data.sources)
    } catch {
      table = new SourceTable()
      data.covered = 0
    }
    if (!Number.isSafeInteger(data.covered) || data.covered > end) {
      table = new SourceTable()
      data.covered = 0
    }
    this.table = table
    this.covered = data.covered
    this.checkpointAt = data.covered
    this.reader.seek(data.covered)
  }

  /** Write the checkpoint when due (or `now`). Under the lock; a failure leaves the older one. */
  checkpoint(now = false): void {
    const ms = Date.now()
    if (!now && ms - this.checkpointMs < CHECKPOINT_MS) {
      const since = this.covered - this.checkpointAt
      if (since < CHECKPOINT_EVERY || since < CHECKPOINT_PER_ENTRY * this.table.inputs()) return
    }
    const file = join(this.dir, SOURCES_FILE)
    const tmp = `${file}.${process.pid}.tmp`
    writeFileSync(tmp, JSON.stringify({ covered: this.covered, sources: this.table.toJSON() }))
    renameSync(tmp, file)
    this.seen = this.stamp()
    this.checkpointAt = this.covered
    this.checkpointMs = ms
  }

  close(): void {
    void this.reader.close().catch(() => undefined)
  }
}

/** The file backend's sourced appends (`TopicStore.appendSourced`): one `PartitionSources` per partition written to. */
export class SourceAppends {
  private readonly parts = new Map<string, PartitionSources>()

  constructor(private readonly host: SourceAppendsHost) {}

  async append(
    topic: string,
    partition: number,
    records: readonly RecordInput[],
    producerId: string,
    source: OutputSource,
    positions: readonly SourcePosition[],
  ): Promise<IdempotentResult[]> {
    checkSourced(records.length, source, positions)
    if (records.length === 0) return []
    const added = SourceHeaders.of(source, positions)
    const sources = await this.partOf(topic, partition)
    let plan: ReturnType<SourceTable['decide']> | undefined
    let base: number | undefined
    let results: IdempotentResult[] | undefined
    await this.host.appendVia(topic, partition, async (a: PartitionAppender) => {
      base = await a.appendChosen(
        (end) => {
          sources.syncTo(end)
          // The lease's deadline judged under the lock, right before the write: a writer paused
          // past it (its partition given to another member) writes nothing.
          if (Date.now() > source.deadline)
            throw fencedOutput(topic, partition, source, 'its lease lapsed (session timeout) before the write')
          const key = sourceKey(source)
          const was = sources.table.sources.get(key)
          const [epoch, floor] = was === undefined ? [-1, -1] : [was.epoch, was.floor]
          plan = sources.table.decide(topic, partition, source, positions)
          if (plan.fresh.length === 0) {
            // Nothing is written, so the log will not tell of this writer's lease (a later epoch
            // fences the earlier ones) or commit: when they changed the table, checkpoint it now.
            const now = sources.table.sources.get(key) as SourceState
            sources.checkpoint(now.epoch !== epoch || now.floor !== floor)
          }
          return plan.fresh.length
        },
        (b) => {
          const p = plan as NonNullable<typeof plan>
          // Each record's SOURCE_HEADER is written as it is encoded: no copy of the record made to hold it.
          // Into the appender's scratch buffer (written at once), not a new buffer per call.
          if (p.fresh.length === records.length) return a.encode(records, b, producerId, added)
          const fresh = p.fresh.map((i) => records[i] as RecordInput)
          return a.encode(fresh, b, producerId, added.pick(p.fresh))
        },
        producerId,
        (b) => {
          const p = plan as NonNullable<typeof plan>
          results = sources.table.stored(source, positions, p, b)
          sources.covered = Math.max(sources.covered, b + p.fresh.length)
          sources.checkpoint()
        },
      )
      return base ?? -1
    })
    return results ?? sources.table.stored(source, positions, plan as NonNullable<typeof plan>, undefined)
  }

  private async partOf(topic: string, partition: number): Promise<PartitionSources> {
    const key = `${topic}\0${partition}`
    const had = this.parts.get(key)
    if (had !== undefined) return had
    const reader = await this.host.openRawReader(topic, partition, 0)
    const now = this.parts.get(key)
    if (now !== undefined) {
      void reader.close().catch(() => undefined)
      return now
    }
    const p = new PartitionSources(this.host.partitionDir(topic, partition), reader)
    this.parts.set(key, p)
    return p
  }

  forgetTopic(topic: string): void {
    for (const [key, p] of this.parts) {
      if (key.startsWith(`${topic}\0`)) {
        p.close()
        this.parts.delete(key)
      }
    }
  }

  close(): void {
    for (const p of this.parts.values()) p.close()
    this.parts.clear()
  }
}
