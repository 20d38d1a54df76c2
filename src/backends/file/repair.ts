import { closeSync, fsyncSync, openSync, readFileSync, readSync, renameSync, unlinkSync } from 'node:fs'
import { BackendError, backendError } from '../../core/errors.js'
import { encodeBatch, encodeSeal } from './batch-format.js'
import { checkPartition, checkSegment, describeDamage, range, type SegmentCheck } from './check.js'
import { checkTopicName } from '../../core/names.js'
import { indexPath, lockFile, partitionDir, startFile, timeIndexPath } from './layout.js'
import { PartitionLock } from './partition-lock.js'
import {
  CREATE_FLAGS,
  READ_FLAGS,
  createFileWith,
  readFull,
  replaceFile,
  syncDirSync,
  tempBeside,
  writeAll,
} from './safe-fs.js'
import { INDEX_INTERVAL_BYTES, encodeIndexEntry } from './segment-index.js'
import { encodeTimeEntry } from './time-index.js'
import { readTopicMeta } from './topic-store.js'

/*
 * `twainmq repair`: make a damaged partition readable again without losing an intact record or
 * changing its offset. Under the partition lock (the one appenders take, so no write interleaves),
 * each damaged segment is rewritten from its intact frames (found by check.ts, which resynchronises
 * after damage at the next valid frame) into a temporary file that is synced and renamed over it:
 * never in place, so a crash leaves the old file or the new one. Every byte not kept is first
 * copied into a quarantine file beside it (created exclusively, never overwritten).
 */

/** Producer id of the frames repair writes (seals, offset reservations). */
const PRODUCER = 'twainmq-repair'
const CHUNK = 1 << 20

/**
 * Repair partition `dir` if `check` finds damage; returns what was done (empty: nothing to do).
 * Appenders of other processes wait for the lock meanwhile and then see the new files (they
 * notice the replaced inode); readers holding the old file open keep seeing the old bytes.
 */
export async function repairPartition(
  dir: string,
  partition: number,
  topic: string,
  compacted = false,
): Promise<string[]> {
  if (checkPartition(dir, partition, topic, compacted).damage.length === 0) return []
  const lock = new PartitionLock(lockFile(dir))
  await lock.acquire()
  const actions: string[] = []
  try {
    // Again under the lock: a writer may have appended since the first look.
    const r = checkPartition(dir, partition, topic, compacted)
    const stamp = new Date().toISOString().replace(/[-:.]/g, '')
    r.segments.forEach((seg, i) => {
      // A seal naming a later segment than the next is a compaction merge's (its leftovers between).
      const sealed = seg.sealedTo
      const following =
        sealed !== undefined && r.segments.some((x) => x.base === sealed) ? sealed : r.segments[i + 1]?.base
      const rewrite = seg.damage.some((d) => d.kind === 'frames')
      if (rewrite) rewriteSegment(dir, seg, following, lock, stamp, actions)
      if (rewrite || seg.indexDamaged || seg.timeIndexDamaged) rebuildIndexes(dir, seg, following, stamp, actions)
    })
    if (r.damage.some((d) => d.kind === 'start')) {
      const first = r.segments[0]?.base ?? 0
      quarantineFile(startFile(dir), stamp, actions)
      replaceFile(startFile(dir), String(first), true)
      actions.push(
        `rewrote the trim mark ${startFile(dir)} as ${first}, the first retained offset (nothing retained stays hidden)`,
      )
    }
  } finally {
    lock.release()
    lock.dispose()
  }
  return actions
}

/** Repair every damaged partition of native topic `topic` under `root`: what was done, per partition. */
export async function repairTopic(
  root: string,
  topic: string,
): Promise<Array<{ partition: number; actions: string[] }>> {
  const meta = await readTopicMeta(root, checkTopicName(topic))
  const out: Array<{ partition: number; actions: string[] }> = []
  for (let p = 0; p < meta.partitions; p++)
    out.push({
      partition: p,
      actions: await repairPartition(partitionDir(root, topic, p), p, topic, meta.compact === true),
    })
  return out
}

/** Write the kept frames of `seg` (plus a seal or an offset reservation when due) to a new file renamed over it. */
function rewriteSegment(
  dir: string,
  seg: SegmentCheck,
  following: number | undefined,
  lock: PartitionLock,
  stamp: string,
  actions: string[],
): void {
  const fd = openSync(seg.path, READ_FLAGS)
  try {
    const aside: Array<[number, number, string]> = seg.damage
      .filter((d) => d.kind === 'frames' && d.to > d.from)
      .map((d) => [d.from, d.to, describeDamage(d)])
    if (seg.tornFrom !== undefined) aside.push([seg.tornFrom, seg.size, 'an unfinished write'])
    if (seg.afterSeal !== undefined) aside.push([seg.afterSeal, seg.size, 'bytes after the seal'])
    for (const [from, to, why] of aside) {
      const q = `${seg.path}.quarantine-${stamp}-${from}`
      createFileWith(q, readRange(fd, from, to), true)
      actions.push(`moved bytes ${from}..${to - 1} of ${seg.path} (${why}) to ${q}`)
    }
    const extra: Buffer[] = []
    // Offsets of records known to be lost at the end of the last segment stay used: a new record
    // must never get the offset of an acknowledged one (consumers may have committed past it).
    if (following === undefined && seg.reserve > seg.keptEnd) {
      extra.push(encodeBatch([], seg.reserve, PRODUCER))
      actions.push(
        `reserved offsets ${range(seg.keptEnd, seg.reserve)}, which lost records may have had (new records continue at ${seg.reserve})`,
      )
    }
    if (seg.needsSeal && following !== undefined) {
      extra.push(encodeSeal(following, PRODUCER))
      actions.push(`sealed ${seg.path} (the log continues in segment ${following})`)
    }
    const tmp = tempBeside(seg.path, 'repair')
    try {
      const out = openSync(tmp, CREATE_FLAGS, 0o644)
      try {
        for (const [from, to] of seg.keep) copyRange(fd, out, from, to)
        for (const f of extra) writeAll(out, f, 0, f.length, null)
        fsyncSync(out)
      } finally {
        closeSync(out)
      }
      // The lock fences the rename: had it been broken (we looked hung), another writer may be appending.
      if (!lock.stillHeld())
        throw new BackendError(`Lost the lock of ${dir} while repairing ${seg.path}; nothing was replaced`, {
          retriable: true,
        })
      renameSync(tmp, seg.path)
    } catch (e) {
      try {
        unlinkSync(tmp)
      } catch {
        /* renamed, or never created */
      }
      throw backendError(`Cannot rewrite ${seg.path}`, e)
    }
    syncDirSync(dir)
    const kept = seg.keep.reduce((n, [a, b]) => n + b - a, 0)
    actions.push(`rewrote ${seg.path}: kept ${kept} bytes of intact frames (${seg.records} records at their offsets)`)
  } finally {
    closeSync(fd)
  }
}

/** Rebuild the sparse and time indexes of segment `seg` from its frames (a damaged old one is quarantined first). */
function rebuildIndexes(
  dir: string,
  seg: SegmentCheck,
  following: number | undefined,
  stamp: string,
  actions: string[],
): void {
  const idx = indexPath(dir, seg.base)
  const tix = timeIndexPath(dir, seg.base)
  if (seg.indexDamaged) quarantineFile(idx, stamp, actions)
  if (seg.timeIndexDamaged) quarantineFile(tix, stamp, actions)
  const entries: Buffer[] = []
  const times: Buffer[] = []
  let prevStart = -1
  let max = -Infinity
  // The same rule as the writers: the first records frame, then the first frame starting in each
  // new 64 KiB; a time index entry with each past byte 0, bounding the records frames before it.
  const check = checkSegment(dir, seg.base, following, (pos, h, misplaced) => {
    if (
      !misplaced &&
      h.count > 0 &&
      (entries.length === 0 || Math.floor(prevStart / INDEX_INTERVAL_BYTES) < Math.floor(pos / INDEX_INTERVAL_BYTES))
    ) {
      if (pos > 0) times.push(encodeTimeEntry({ offset: h.baseOffset, position: pos, maxBefore: max, frameId: h.id }))
      entries.push(encodeIndexEntry(h.baseOffset, pos))
    }
    if (!misplaced && h.count > 0 && h.maxTimestamp > max) max = h.maxTimestamp
    prevStart = pos
  })
  replaceFile(idx, Buffer.concat(entries), true)
  replaceFile(tix, Buffer.concat(times), true)
  const count = (n: number) => `${n} ${n === 1 ? 'entry' : 'entries'}`
  actions.push(`rebuilt the index ${idx} (${count(entries.length)}) and the time index ${tix} (${count(times.length)})`)
  const left = check.damage.filter((d) => d.kind === 'frames')
  if (left.length > 0)
    throw new BackendError(`Repair of ${check.path} left damage: ${left.map(describeDamage).join('; ')}`, {
      retriable: false,
    })
}

/** Copy a whole file aside before it is replaced. */
function quarantineFile(path: string, stamp: string, actions: string[]): void {
  let bytes: Buffer
  try {
    bytes = readFileSync(path)
  } catch {
    return // nothing there to keep
  }
  const q = `${path}.quarantine-${stamp}`
  createFileWith(q, bytes, true)
  actions.push(`moved the damaged ${path} to ${q}`)
}

function readRange(fd: number, from: number, to: number): Buffer {
  const buf = Buffer.allocUnsafe(to - from)
  if (readFull(fd, buf, buf.length, from) < buf.length) {
    throw backendError(
      `Cannot read bytes ${from}..${to - 1}`,
      Object.assign(new Error('unexpected end of file'), { code: 'EIO' }),
    )
  }
  return buf
}

function copyRange(src: number, dst: number, from: number, to: number): void {
  const buf = Buffer.allocUnsafe(Math.min(CHUNK, to - from))
  for (let pos = from; pos < to;) {
    const n = readSync(src, buf, 0, Math.min(buf.length, to - pos), pos)
    if (n === 0) throw Object.assign(new Error(`unexpected end of file at byte ${pos}`), { code: 'EIO' })
    writeAll(dst, buf, 0, n, null)
    pos += n
  }
}
