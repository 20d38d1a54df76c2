import { closeSync, fstatSync, openSync, readFileSync, readdirSync, unlinkSync } from 'node:fs'
import { join } from 'node:path'
import { backendError } from '../../core/errors.js'
import { FLAG_SEAL } from './batch-format.js'
import { MAX_WINDOW_MS } from '../record.js'
import { indexPath, lockFile, segmentPath, timeIndexPath } from './layout.js'
import { PartitionLock } from './partition-lock.js'
import { fdIdentity, sizeIfSame } from './partition-changes.js'
import { READ_FLAGS, syncDirSync } from './safe-fs.js'
import { deleteLeftovers, leftoverBases, mergeRun, mergeRuns } from './compaction-merge.js'
import { rewriteSegment, type SegmentRewrite } from './compaction-rewrite.js'
import { listSegmentsSync, readStartOffsetSync } from './segment-list.js'
import { forEachRecord, walkFrames, type StoredRecord } from './segment-records.js'
import { SOURCES_FILE } from './source-appends.js'

/*
 * One compaction pass over a partition of a compacted topic (docs/format.md, "Compacted topics"):
 *
 * 1. Without the lock, read every segment (the active one up to its end now) into a map of each
 *    key's latest offset; records are compared by their key bytes as stored.
 * 2. For each sealed segment (never the active one), decide what stays: a key's latest record (a
 *    tombstone only until `tombstoneRetentionMs` after its segment was last written, so after it was
 *    stored, whatever its event time), every record the
 *    idempotent appends may still read back (an id within the longest dedup window), every
 *    processor output the source table's checkpoint does not cover yet. A segment losing nothing
 *    (and with its index) is left alone.
 * 3. Write the kept frames, their index and time index to temporary files beside it, synced.
 * 4. Under the partition lock, only if the segment is still the file read in 1 (no repair,
 *    retention or other pass replaced it): remove its index and time index, rename the new
 *    segment over it, then the new indexes, sync the directory.
 *
 * Passes of several processes may run at once (a background pass of each store, `compact`): a
 * segment gone when step 1 opens it (merged away, retention) sends step 1 back to the listing, and a
 * merge finding a segment of its run gone leaves the run alone.
 *
 * A crash before 4 leaves temporary files (a later pass removes them); inside 4, a segment
 * without its index, which readers scan and the next pass rewrites. Readers holding the old file
 * open keep reading it (a superset of the new one); a reader that reopens finds its offset in the
 * new file, stepping over the gaps.
 */

/** What a pass keeps, beyond each key's latest record. */
export interface CompactionRules {
  /** How long a tombstone is kept after it was stored (its segment's last write), in ms. */
  tombstoneRetentionMs: number
  /** The pass's clock (ms since the epoch). */
  now: number
  /** Merge runs of sealed segments whose bytes together stay within this (the store's segment size); none when absent. */
  mergeBytes?: number
}

/** Records and bytes of a partition before and after a pass; `rewritten`: segments replaced. */
export interface PartitionCompaction {
  before: { records: number; bytes: number }
  after: { records: number; bytes: number }
  rewritten: number
}

/** A segment as step 1 read it. */
interface ScannedSegment {
  base: number
  id: string
  size: number
  records: number
  sealed: boolean
  /** The segment its seal names. */
  sealedTo?: number
  /** When it was last written (ms since the epoch): no record in it was stored later. */
  written: number
}

/** Run one pass over partition directory `dir` (see above). */
export async function compactPartition(
  dir: string,
  topic: string,
  rules: CompactionRules,
): Promise<PartitionCompaction> {
  removeStaleTemps(dir)
  const sourcesFrom = sourcesCovered(dir)
  const pinned = (r: StoredRecord): boolean =>
    (r.id && r.timestamp > rules.now - MAX_WINDOW_MS) || (r.sourced && r.offset >= sourcesFrom)
  const { start, latest, lastPinned, all } = scanPartition(dir, topic, pinned)
  // A merge killed before it deleted the rest of its run left segments a seal skips: gone now.
  const leftovers = leftoverBases(
    all.map((s) => s.base),
    new Map(all.flatMap((s) => (s.sealedTo === undefined ? [] : [[s.base, s.sealedTo]]))),
  )
  await deleteLeftovers(dir, leftovers)
  const scanned = all.filter((s) => !leftovers.has(s.base))
  const out: PartitionCompaction = {
    before: { records: 0, bytes: 0 },
    after: { records: 0, bytes: 0 },
    rewritten: 0,
  }
  for (const s of scanned) {
    out.before.records += s.records
    out.before.bytes += s.size
  }
  // A tombstone goes once its segment was last written longer ago than the retention: a record's
  // timestamp may be an event time long past, and a reader must get time to read the deletion.
  const expired = (r: StoredRecord, written: number): boolean =>
    r.tombstone &&
    written <= rules.now - rules.tombstoneRetentionMs &&
    !((lastPinned.get(r.key) ?? r.offset) < r.offset)
  const keep = (r: StoredRecord, written: number): boolean =>
    r.offset >= start && ((latest.get(r.key) === r.offset && !expired(r, written)) || pinned(r))
  for (const s of scanned) {
    if (!s.sealed) {
      out.after.records += s.records
      out.after.bytes += s.size
      continue
    }
    const done = await compactSegment(dir, s, (r) => keep(r, s.written))
    out.after.records += done?.records ?? s.records
    out.after.bytes += done?.bytes ?? s.size
    if (done) out.rewritten++
  }
  if (rules.mergeBytes !== undefined) {
    for (const run of mergeRuns(dir, listSegmentsSync(dir, topic), rules.mergeBytes)) {
      const saved = await mergeRun(dir, run)
      if (saved !== undefined) out.after.bytes -= saved
    }
  }
  return out
}

/** Step 1 over the partition, read again from its listing while a segment listed is gone when opened (another process's merge, retention). */
function scanPartition(
  dir: string,
  topic: string,
  pinned: (r: StoredRecord) => boolean,
): { start: number; latest: Map<string, number>; lastPinned: Map<string, number>; all: ScannedSegment[] } {
  for (let attempt = 1; ; attempt++) {
    const start = readStartOffsetSync(dir)
    const bases = listSegmentsSync(dir, topic)
    const latest = new Map<string, number>()
    // Per key, the last record kept for dedup whatever comes after it: while one older than the key's
    // latest stays, a tombstone that is the latest stays too, or the deleted key would come back.
    const lastPinned = new Map<string, number>()
    const all: ScannedSegment[] = []
    for (const [i, base] of bases.entries()) {
      const s = scanSegment(dir, base, i === bases.length - 1, start, (r) => {
        latest.set(r.key, r.offset)
        if (pinned(r)) lastPinned.set(r.key, r.offset)
      })
      if (s === undefined) break
      all.push(s)
    }
    if (all.length === bases.length) return { start, latest, lastPinned, all }
    if (attempt === 100)
      throw backendError(`Compaction of ${dir} stopped`, new Error('its segments kept changing while read'))
  }
}

/** Step 1 for one segment: its records at or past `start` visited, counted; damage in a sealed one stops the pass; undefined when it is gone. */
function scanSegment(
  dir: string,
  base: number,
  last: boolean,
  start: number,
  visit: (r: StoredRecord) => void,
): ScannedSegment | undefined {
  const path = segmentPath(dir, base)
  let fd: number
  try {
    fd = openSync(path, READ_FLAGS)
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw backendError(`Compaction of ${path} stopped`, e)
  }
  try {
    const st = fstatSync(fd)
    const size = st.size
    const s: ScannedSegment = { base, id: fdIdentity(fd), size, records: 0, sealed: false, written: st.mtimeMs }
    let prevEnd = -1
    const end = walkFrames(fd, size, (f) => {
      if (f.h.flags & FLAG_SEAL) s.sealedTo = f.h.baseOffset
      // Misplaced frames (a broken lock's writer) are skipped, as readers skip them.
      if (f.h.flags & FLAG_SEAL || f.h.baseOffset < prevEnd) return
      prevEnd = f.h.baseOffset + f.h.count
      forEachRecord(f, (r) => {
        if (r.offset < start) return
        s.records++
        visit(r)
      })
    })
    s.sealed = end.sealed && !last
    if (end.damage !== undefined && !last)
      throw backendError(
        `Compaction of ${path} stopped: ${end.damage} (run twainmq check and repair)`,
        Object.assign(new Error(end.damage), { code: 'EIO' }),
      )
    return s
  } finally {
    closeSync(fd)
  }
}

/** Steps 2–4 for one sealed segment: what it holds now when it was replaced, undefined when left alone. */
async function compactSegment(
  dir: string,
  s: ScannedSegment,
  keep: (r: StoredRecord) => boolean,
): Promise<SegmentRewrite | undefined> {
  const path = segmentPath(dir, s.base)
  let fd: number
  try {
    fd = openSync(path, READ_FLAGS)
  } catch {
    return undefined // removed meanwhile (retention, a trim)
  }
  let made: SegmentRewrite | undefined
  try {
    if (fdIdentity(fd) !== s.id) return undefined
    made = rewriteSegment(dir, s.base, fd, keep, s.records)
  } finally {
    closeSync(fd)
  }
  if (made === undefined) return undefined
  const lock = new PartitionLock(lockFile(dir))
  await lock.acquire()
  try {
    // Replaced only if it is still the file read (a repair, retention or another pass may have come first).
    if (sizeIfSame(path, s.id) !== s.size || !lock.stillHeld()) {
      made.discard()
      return undefined
    }
    for (const f of [indexPath(dir, s.base), timeIndexPath(dir, s.base)]) unlinkQuietly(f)
    made.install()
    syncDirSync(dir)
  } catch (e) {
    made.discard()
    throw backendError(`Cannot replace ${path} with its compacted copy`, e)
  } finally {
    lock.release()
    lock.dispose()
  }
  return made
}

/**
 * The offset the partition's source-table checkpoint covers: outputs at or past it are read back
 * into the table by a process that starts, so they are kept. 0 (keep every output) when the
 * checkpoint is missing or unreadable.
 */
function sourcesCovered(dir: string): number {
  try {
    const covered = (JSON.parse(readFileSync(join(dir, SOURCES_FILE), 'utf8')) as { covered?: unknown }).covered
    return typeof covered === 'number' && Number.isSafeInteger(covered) && covered >= 0 ? covered : 0
  } catch {
    return 0
  }
}

/** Temporary files of passes whose process is gone (killed between steps 3 and 4). */
function removeStaleTemps(dir: string): void {
  let names: string[]
  try {
    names = readdirSync(dir)
  } catch {
    return
  }
  for (const n of names) {
    const m = /^\..*\.compact-(\d+)-[0-9a-f]+$/.exec(n)
    if (m === null || Number(m[1]) === process.pid || alive(Number(m[1]))) continue
    unlinkQuietly(join(dir, n))
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'
  }
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path)
  } catch {
    /* already gone */
  }
}
