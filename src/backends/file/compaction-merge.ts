import { closeSync, fstatSync, fsyncSync, futimesSync, openSync, renameSync, statSync, unlinkSync } from 'node:fs'
import { backendError } from '../../core/errors.js'
import { FLAG_SEAL } from './batch-format.js'
import { FrameWriter, writeSynced } from './compaction-rewrite.js'
import { indexPath, lockFile, segmentPath, timeIndexPath } from './layout.js'
import { PartitionLock } from './partition-lock.js'
import { fdIdentity, sizeIfSame } from './partition-changes.js'
import { CREATE_FLAGS, READ_FLAGS, syncDirSync, tempBeside } from './safe-fs.js'
import { walkFrames } from './segment-records.js'

/*
 * Merging a run of small sealed segments of a compacted partition into the first of them (a pass's
 * last step), so that emptied segments do not pile up: the copy holds the run's frames in order,
 * without the seals between them, and ends with the run's last seal (naming the segment after the
 * run). Under the partition lock, only if every segment of the run is still the file read: the copy
 * is renamed over the first (its indexes removed first, as a rewrite does), then the others are
 * deleted. A crash between the rename and the deletions leaves "leftovers": segments the first's
 * seal skips. They hold the same records as before (readers seeking into them read those and
 * follow their seals); `check` notes them, and the next pass deletes them (`leftoverBases`).
 */

/** The segments of `sealed` (base → the segment its seal names) that a seal skips: a merge's leftovers. */
export function leftoverBases(bases: readonly number[], sealedTo: ReadonlyMap<number, number>): Set<number> {
  const out = new Set<number>()
  for (const [i, base] of bases.entries()) {
    const to = sealedTo.get(base)
    if (to === undefined) continue
    for (let j = i + 1; j < bases.length && (bases[j] as number) < to; j++) out.add(bases[j] as number)
  }
  return out
}

/** Delete leftover segments (under the lock: a merge in progress elsewhere finishes first). */
export async function deleteLeftovers(dir: string, leftovers: Iterable<number>): Promise<void> {
  const list = [...leftovers]
  if (list.length === 0) return
  const lock = new PartitionLock(lockFile(dir))
  await lock.acquire()
  try {
    for (const b of list)
      for (const f of [segmentPath(dir, b), indexPath(dir, b), timeIndexPath(dir, b)]) unlinkQuietly(f)
    syncDirSync(dir)
  } finally {
    lock.release()
    lock.dispose()
  }
}

/**
 * Runs of consecutive sealed segments (all of `bases` but the last, leftovers excluded by the
 * caller) whose bytes together stay within `limit`: each run of two or more is merged.
 */
export function mergeRuns(dir: string, bases: readonly number[], limit: number): number[][] {
  const runs: number[][] = []
  let run: number[] = []
  let bytes = 0
  for (const base of bases.slice(0, -1)) {
    const size = statSync(segmentPath(dir, base), { throwIfNoEntry: false })?.size ?? Infinity
    if (run.length > 0 && bytes + size <= limit) {
      run.push(base)
      bytes += size
      continue
    }
    if (run.length > 1) runs.push(run)
    run = size <= limit ? [base] : []
    bytes = size
  }
  if (run.length > 1) runs.push(run)
  return runs
}

/** Merge `run` (bases of consecutive sealed segments) into its first: the bytes saved, or undefined when one changed meanwhile (left alone). */
export async function mergeRun(dir: string, run: readonly number[]): Promise<number | undefined> {
  const first = run[0] as number
  const path = segmentPath(dir, first)
  const temps = [tempBeside(path, 'compact'), tempBeside(indexPath(dir, first), 'compact')]
  temps.push(tempBeside(timeIndexPath(dir, first), 'compact'))
  const seen: Array<{ base: number; id: string; size: number }> = []
  let w: FrameWriter
  let gone = false
  try {
    const out = openSync(temps[0] as string, CREATE_FLAGS, 0o644)
    try {
      w = new FrameWriter(out)
      let mtime = new Date(0)
      for (const [k, base] of run.entries()) {
        const fd = openIfPresent(segmentPath(dir, base))
        // Gone meanwhile (another process merged it away, retention): the run is left alone.
        if (fd === undefined) {
          gone = true
          break
        }
        try {
          const st = fstatSync(fd)
          seen.push({ base, id: fdIdentity(fd), size: st.size })
          if (st.mtime > mtime) mtime = st.mtime
          const last = k === run.length - 1
          const end = walkFrames(fd, st.size, (f) => {
            if (f.h.flags & FLAG_SEAL && !last) return
            w.write(f.buf.subarray(f.rel, f.rel + f.h.length), f.h)
          })
          if (!end.sealed || end.damage !== undefined) throw new Error(`segment ${base} is not whole and sealed`)
        } finally {
          closeSync(fd)
        }
      }
      // Retention by age sees the run as its newest segment.
      futimesSync(out, mtime, mtime)
      fsyncSync(out)
    } finally {
      closeSync(out)
    }
    if (!gone) {
      writeSynced(temps[1] as string, Buffer.concat(w.entries))
      writeSynced(temps[2] as string, Buffer.concat(w.times))
    }
  } catch (e) {
    discard(temps)
    throw backendError(`Cannot merge segments ${run.join(', ')} of ${dir}`, e)
  }
  if (gone) {
    discard(temps)
    return undefined
  }
  const lock = new PartitionLock(lockFile(dir))
  await lock.acquire()
  try {
    if (!lock.stillHeld() || seen.some((s) => sizeIfSame(segmentPath(dir, s.base), s.id) !== s.size)) {
      discard(temps)
      return undefined
    }
    for (const f of [indexPath(dir, first), timeIndexPath(dir, first)]) unlinkQuietly(f)
    renameSync(temps[0] as string, path)
    renameSync(temps[1] as string, indexPath(dir, first))
    renameSync(temps[2] as string, timeIndexPath(dir, first))
    syncDirSync(dir)
    for (const b of run.slice(1))
      for (const f of [segmentPath(dir, b), indexPath(dir, b), timeIndexPath(dir, b)]) unlinkQuietly(f)
    syncDirSync(dir)
    return seen.reduce((n, s) => n + s.size, 0) - w.position
  } catch (e) {
    discard(temps)
    throw backendError(`Cannot merge segments ${run.join(', ')} of ${dir}`, e)
  } finally {
    lock.release()
    lock.dispose()
  }
}

function openIfPresent(path: string): number | undefined {
  try {
    return openSync(path, READ_FLAGS)
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw e
  }
}

function discard(temps: readonly string[]): void {
  for (const t of temps) unlinkQuietly(t)
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path)
  } catch {
    /* already gone */
  }
}
