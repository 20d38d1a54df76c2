import type { BackgroundFailure } from '../../core/logger.js'
import { readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import type { CompactionStats, TopicMeta } from '../backend.js'
import { compactPartition, type PartitionCompaction } from './compaction.js'
import { segmentPath } from './layout.js'
import { replaceFile } from './safe-fs.js'
import { listSegmentsSync } from './segment-list.js'

/** A partition's last pass, beside its segments (`{ at, before, after }`, as `CompactionStats`). */
export const COMPACTION_FILE = 'compaction.json'

/** A day: a compacted topic's tombstones are kept this long unless it says otherwise. */
const DEFAULT_TOMBSTONE_MS = 86_400_000

/**
 * A background pass over a partition runs after a segment of it is sealed, when the bytes sealed
 * since its last pass in this process are at least half of the partition's (a dirty ratio of 0.5,
 * so each byte is rewritten a bounded number of times), and at most once a second.
 */
const DIRTY_RATIO = 0.5
const MIN_PASS_INTERVAL_MS = 1000

/**
 * The compaction passes of one store's partitions (compaction.ts does one): at most one at a time
 * per partition in this process (another process's pass is fenced per segment by the partition lock
 * and the segment's identity), in the background after a roll, or now over a whole topic.
 */
export class Compactor {
  /** The pass running per partition directory. */
  private readonly running = new Map<string, Promise<PartitionCompaction>>()
  /** Per partition directory: its bytes after the last pass here, and when it ended. */
  private readonly clean = new Map<string, { bytes: number; at: number }>()
  /** Per partition directory: a look again at a background pass, after the one running or the interval. */
  private readonly deferred = new Map<string, NodeJS.Timeout>()
  private closed = false

  /**
   * `segmentBytes`: the store's segment size, which merged segments stay within; `failed`: told of a
   * background pass that failed (the next roll tries again).
   */
  constructor(
    private readonly segmentBytes: number,
    private readonly failed?: BackgroundFailure,
  ) {}

  /** After a segment of `dir` was sealed: a background pass when due (see `DIRTY_RATIO`); a failure is reported, and left to the next. */
  afterRoll(dir: string, topic: string, meta: TopicMeta): void {
    if (meta.compact !== true || this.closed) return
    const last = this.clean.get(dir)
    const wait = last === undefined ? 0 : last.at + MIN_PASS_INTERVAL_MS - Date.now()
    if (this.running.has(dir) || wait > 0) {
      // Not now: looked at again once the pass running or the interval is over (a burst of rolls
      // ends with a pass over its last segments, not with them left for the next roll).
      if (!this.deferred.has(dir))
        this.deferred.set(
          dir,
          setTimeout(
            () => {
              this.deferred.delete(dir)
              this.afterRoll(dir, topic, meta)
            },
            Math.max(wait, 50),
          ).unref(),
        )
      return
    }
    if (last !== undefined) {
      let bytes: number
      try {
        bytes = partitionBytes(dir, topic)
      } catch {
        return // the topic is gone
      }
      if (bytes - last.bytes < DIRTY_RATIO * bytes) return
    }
    void this.pass(dir, topic, meta).catch((e: unknown) =>
      this.failed?.({ topic, dir }, `twainmq: a background compaction pass over ${dir} failed`, e),
    )
  }

  /** One pass over `dir` now (after the one running, if any); its result is recorded beside it. */
  pass(dir: string, topic: string, meta: TopicMeta): Promise<PartitionCompaction> {
    const before = this.running.get(dir) ?? Promise.resolve(undefined)
    const run = before
      .catch(() => undefined)
      .then(async () => {
        const done = await compactPartition(dir, topic, {
          tombstoneRetentionMs: meta.tombstoneRetentionMs ?? DEFAULT_TOMBSTONE_MS,
          now: Date.now(),
          mergeBytes: this.segmentBytes,
        })
        const at = Date.now()
        this.clean.set(dir, { bytes: done.after.bytes, at })
        const stats: CompactionStats = { at, before: done.before, after: done.after }
        replaceFile(join(dir, COMPACTION_FILE), JSON.stringify(stats) + '\n')
        return done
      })
      .finally(() => {
        if (this.running.get(dir) === run) this.running.delete(dir)
      })
    this.running.set(dir, run)
    return run
  }

  /** No more background passes; wait for those running (a store closing). */
  async close(): Promise<void> {
    this.closed = true
    for (const t of this.deferred.values()) clearTimeout(t)
    this.deferred.clear()
    await Promise.allSettled([...this.running.values()])
  }
}

/** The last pass over each of `dirs` summed (`at`: the latest); undefined when none has run. */
export function lastCompactionOf(dirs: readonly string[]): CompactionStats | undefined {
  let out: CompactionStats | undefined
  for (const dir of dirs) {
    const s = readStats(join(dir, COMPACTION_FILE))
    if (s === undefined) continue
    out ??= { at: 0, before: { records: 0, bytes: 0 }, after: { records: 0, bytes: 0 } }
    out.at = Math.max(out.at, s.at)
    for (const k of ['before', 'after'] as const) {
      out[k].records += s[k].records
      out[k].bytes += s[k].bytes
    }
  }
  return out
}

/** A stats file as written by `pass`; undefined when missing or not one (a damaged file is only statistics). */
function readStats(file: string): CompactionStats | undefined {
  let j: unknown
  try {
    j = JSON.parse(readFileSync(file, 'utf8'))
  } catch {
    return undefined
  }
  const n = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0
  const side = (v: unknown): v is { records: number; bytes: number } =>
    typeof v === 'object' && v !== null && n((v as { records: unknown }).records) && n((v as { bytes: unknown }).bytes)
  const s = j as Partial<CompactionStats> | null
  return s !== null && typeof s === 'object' && n(s.at) && side(s.before) && side(s.after)
    ? { at: s.at, before: s.before, after: s.after }
    : undefined
}

/** The bytes of a partition's segments now. */
function partitionBytes(dir: string, topic: string): number {
  let total = 0
  for (const b of listSegmentsSync(dir, topic))
    total += statSync(segmentPath(dir, b), { throwIfNoEntry: false })?.size ?? 0
  return total
}
