import { closeSync, fstatSync, openSync } from 'node:fs'
import { basename } from 'node:path'
import { rm, stat } from 'node:fs/promises'
import { backendError } from '../../core/errors.js'
import type { Retention } from '../../core/types.js'
import { indexPath, lockFile, segmentPath, startFile, timeIndexPath } from './layout.js'
import { segmentMaxTimestamp } from './segment-max.js'
import { PartitionLock } from './partition-lock.js'
import { basesOf, listPartitionSync, listSegments, listSegmentsSync, readStartOffsetSync } from './segment-list.js'
import { lastIndexedFrame } from './segment-index.js'
import { READ_FLAGS, replaceFile } from './safe-fs.js'
import { scanSegmentSync } from './segment-scan.js'

/**
 * Next offset to be written in a partition, from its last segment (following a trailing seal),
 * synchronously (a few page-cache reads): lets `tail({ from: 'end' })` fix its start at
 * the moment `tail()` is called, so a message sent right after is never missed.
 */
export function partitionEndSync(dir: string, topic: string, bases = listSegmentsSync(dir, topic)): number {
  let base = bases.length ? (bases[bases.length - 1] as number) : 0
  for (;;) {
    let fd: number
    try {
      fd = openSync(segmentPath(dir, base), READ_FLAGS)
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return base // sealed into a successor not created yet
      throw backendError(`Cannot open segment ${segmentPath(dir, base)}`, e)
    }
    try {
      let from = 0
      let next = base
      try {
        const ifd = openSync(indexPath(dir, base), READ_FLAGS)
        try {
          const hit = lastIndexedFrame(fd, ifd, fstatSync(ifd).size)
          if (hit) ({ position: from, offset: next } = hit)
        } finally {
          closeSync(ifd)
        }
      } catch {
        /* no index: scan from 0 */
      }
      const size = fstatSync(fd).size
      const scan = scanSegmentSync(fd, from, size, next)
      // Damage ends what can be read (and written): the end is where the readable records end.
      if (scan.sealedTo === undefined) return scan.nextOffset
      base = scan.sealedTo
    } finally {
      closeSync(fd)
    }
  }
}

/**
 * Start and end of a partition from one directory listing, synchronously; the trim mark is read only
 * when it is listed. `offsets()` of a topic does this for every partition: two listings and a failed
 * open of the (usually absent) mark per partition made it 1.5 s at 10,000 partitions.
 */
export function partitionSpanSync(dir: string, topic: string): { start: number; end: number } {
  const names = listPartitionSync(dir, topic)
  const bases = basesOf(names)
  const mark = names.includes(basename(startFile(dir))) ? readStartOffsetSync(dir) : 0
  const end = partitionEndSync(dir, topic, bases)
  return { start: Math.min(Math.max(mark, bases[0] ?? 0), end), end }
}

/**
 * The start of `partitionSpanSync` from the partition directory's `names`: the end (a scan of the
 * last frames) is read only when there is a trim mark past the first segment's base, the one case
 * where it can clamp the start (the end is never below the last segment's base).
 */
export function partitionStartSync(dir: string, topic: string, names: string[]): number {
  const bases = basesOf(names)
  const first = bases[0] ?? 0
  const mark = names.includes(basename(startFile(dir))) ? readStartOffsetSync(dir) : 0
  return mark <= first ? first : Math.min(mark, partitionEndSync(dir, topic, bases))
}

function writeStart(dir: string, offset: number): void {
  replaceFile(startFile(dir), String(offset))
}

/**
 * Move a partition's start to `before` (clamped to [start, end]) and delete the segments wholly
 * below it. Exact at message level: the start mark hides trimmed messages in a partly trimmed
 * segment. Returns how many messages were removed.
 */
export async function trimPartition(dir: string, topic: string, before: number): Promise<number> {
  const lock = new PartitionLock(lockFile(dir))
  await lock.acquire()
  try {
    const { start, end } = partitionSpanSync(dir, topic)
    const target = Math.min(Math.max(before, start), end)
    if (target <= start) return 0
    writeStart(dir, target)
    await deleteSegmentsBelow(dir, topic, target)
    return target - start
  } finally {
    lock.release()
    lock.dispose()
  }
}

async function deleteSegmentsBelow(dir: string, topic: string, offset: number): Promise<void> {
  const bases = await listSegments(dir, topic)
  // Segment i holds offsets [bases[i], bases[i+1]); never delete the last (active) one.
  for (let i = 0; i + 1 < bases.length && (bases[i + 1] as number) <= offset; i++) {
    const b = bases[i] as number
    await rm(segmentPath(dir, b), { force: true })
    await rm(indexPath(dir, b), { force: true })
    await rm(timeIndexPath(dir, b), { force: true })
  }
}

/**
 * Apply retention limits by deleting whole old segments (never the active one), oldest first.
 * `maxAgeMs` judges a segment by the newest timestamp of its records (`segmentMaxTimestamp`; the
 * event time a send gave, else its append time): a segment goes once that is older than the limit
 * and every segment before it went, so a record is never removed while a newer one before it in
 * the log is kept for age. Returns messages removed.
 */
export async function applyPartitionRetention(dir: string, topic: string, r: Retention): Promise<number> {
  if (r.maxMessages === undefined && r.maxAgeMs === undefined && r.maxBytes === undefined) return 0
  const lock = new PartitionLock(lockFile(dir))
  await lock.acquire()
  try {
    const bases = await listSegments(dir, topic)
    if (bases.length < 2) return 0
    const { start, end } = partitionSpanSync(dir, topic)
    const stats = await Promise.all(bases.map((b) => stat(segmentPath(dir, b)).catch(() => undefined)))
    let total = stats.reduce((n, s) => n + (s?.size ?? 0), 0)
    let cut = 0 // number of leading segments to delete
    const now = Date.now()
    while (cut + 1 < bases.length) {
      const nextBase = bases[cut + 1] as number
      const s = stats[cut]
      const tooMany = r.maxMessages !== undefined && end - nextBase >= r.maxMessages
      const tooBig = r.maxBytes !== undefined && total > r.maxBytes
      const tooOld =
        r.maxAgeMs !== undefined && s !== undefined && olderThan(dir, bases[cut] as number, now - r.maxAgeMs)
      if (!tooMany && !tooBig && !tooOld) break
      total -= s?.size ?? 0
      cut++
    }
    if (cut === 0) return 0
    const newStart = bases[cut] as number
    if (newStart > start) writeStart(dir, newStart)
    await deleteSegmentsBelow(dir, topic, newStart)
    return Math.max(0, newStart - start)
  } catch (e) {
    throw backendError(`Retention of topic "${topic}" failed`, e)
  } finally {
    lock.release()
    lock.dispose()
  }
}

/** Whether every record of segment `base` is older than `time` (false when that cannot be told). */
function olderThan(dir: string, base: number, time: number): boolean {
  const max = segmentMaxTimestamp(dir, base)
  return max !== undefined && max < time
}
