import { closeSync, fstatSync, fsyncSync, ftruncateSync, lstatSync, openSync, readSync, readdirSync } from 'node:fs'
import { TopicCorruptError, TopicNotFoundError, backendError } from '../../core/errors.js'
import { encodeSeal, frameIdAt, HEADER_BYTES } from './batch-format.js'
import { indexPath, segmentBase, segmentPath, timeIndexPath } from './layout.js'
import { APPEND_FLAGS, closeQuietly, isRealDir, syncDirSync, writeAll } from './safe-fs.js'
import { INDEX_ENTRY_BYTES, INDEX_INTERVAL_BYTES, encodeIndexEntry, lastIndexedFrame } from './segment-index.js'
import { damageError, scanSegmentSync } from './segment-scan.js'
import { TimeIndexWriter } from './time-index-writer.js'

/** A writer's view of a partition's active segment, brought up to date under the partition lock. */
export interface ActiveSegment {
  base: number
  path: string
  fd: number
  idxFd: number
  /** Inode of the segment file: a different inode at `path` means it was replaced (repair, re-created topic). */
  ino: number
  /** End of the last valid frame. */
  size: number
  nextOffset: number
  /** Start of the last frame, to decide where index entries go. */
  lastFrameStart: number
  /** Bytes of whole index entries. */
  idxSize: number
  /** The time index: entries go with the sparse index's, after the segment's first frame. */
  times: TimeIndexWriter
}

const notFound = (topic: string, dir: string) => new TopicNotFoundError(`Topic "${topic}" does not exist (no ${dir})`)

/** Open the newest segment of partition directory `dir` (creating the first one if none exists). */
export function openLatest(dir: string, topic: string): ActiveSegment {
  let names: string[]
  try {
    if (!isRealDir(dir, 'partition directory')) throw notFound(topic, dir)
    names = readdirSync(dir)
  } catch (e) {
    throw backendError(`Cannot list ${dir}`, e)
  }
  let base = -1
  for (const n of names) {
    const b = segmentBase(n)
    if (b !== undefined && b > base) base = b
  }
  // The scan learns the next offset: offsets are stored, so base is where it starts.
  return openSegment(dir, topic, Math.max(base, 0))
}

/** Open (creating if absent, never through a symlink) segment `base` and its index; positioned by the index's last valid entry. */
export function openSegment(dir: string, topic: string, base: number): ActiveSegment {
  const path = segmentPath(dir, base)
  let fd = -1
  let idxFd = -1
  try {
    fd = openSync(path, APPEND_FLAGS, 0o644)
    idxFd = openSync(indexPath(dir, base), APPEND_FLAGS, 0o644)
    // A torn index entry would misalign every later one.
    let idxSize = fstatSync(idxFd).size
    if (idxSize % INDEX_ENTRY_BYTES !== 0) {
      idxSize -= idxSize % INDEX_ENTRY_BYTES
      ftruncateSync(idxFd, idxSize)
    }
    // The first scan starts at the last valid index entry rather than at byte 0 of a large segment.
    const hit = lastIndexedFrame(fd, idxFd, idxSize)
    const at = hit?.position ?? 0
    // What the frames before the scan's start hold: nothing at byte 0, else what the time index says.
    const st = fstatSync(fd)
    const times = TimeIndexWriter.resume(timeIndexPath(dir, base), fd, st.size, at)
    return {
      base,
      path,
      fd,
      idxFd,
      ino: st.ino,
      size: at,
      nextOffset: hit?.offset ?? base,
      lastFrameStart: at,
      idxSize,
      times,
    }
  } catch (e) {
    for (const f of [fd, idxFd]) if (f >= 0) closeSync(f)
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw notFound(topic, dir)
    throw backendError(`Cannot open segment ${path}`, e)
  }
}

/**
 * Bring the view up to date; call with the lock held. Scans only the bytes appended since the view
 * was last brought up to date, follows seal frames to the next segment, removes a clean torn write
 * (a writer that died mid-frame: nobody else writes while we hold the lock), and refuses damage:
 * a corrupt frame or a segment shrunk below what was validated throws `TopicCorruptError` and is
 * never truncated.
 */
export function refresh(seg: ActiveSegment | undefined, dir: string, topic: string): ActiveSegment {
  seg ??= openLatest(dir, topic)
  for (;;) {
    let size: number
    try {
      // Fencing of the file itself: another process may have replaced it (repair) or deleted the topic.
      if (lstatSync(seg.path, { throwIfNoEntry: false })?.ino !== seg.ino) {
        closeSegment(seg)
        seg = openLatest(dir, topic)
        continue
      }
      size = fstatSync(seg.fd).size
    } catch (e) {
      closeSegment(seg)
      throw backendError(`Cannot stat segment ${seg.path}`, e)
    }
    if (size === seg.size) return seg
    if (size < seg.size) {
      closeSegment(seg)
      throw new TopicCorruptError(
        `Segment ${seg.path} shrank from ${seg.size} to ${size} bytes under twainmq (truncated by another program): refusing to write; run \`twainmq check\``,
        {
          file: seg.path,
          position: size,
          offset: seg.nextOffset,
        },
      )
    }
    const scan = scanSegmentSync(seg.fd, seg.size, size, seg.nextOffset)
    seg.size = scan.end
    seg.nextOffset = scan.nextOffset
    seg.lastFrameStart = scan.lastFrameStart
    seg.times.saw(scan.maxTimestamp)
    if (scan.damage) {
      closeSegment(seg)
      throw damageError(seg.path, scan.damage)
    }
    if (scan.sealedTo !== undefined) {
      const next = scan.sealedTo
      closeSegment(seg)
      seg = openSegment(dir, topic, next)
      continue
    }
    if (scan.tornBytes > 0) ftruncateSync(seg.fd, seg.size)
    return seg
  }
}

/**
 * Append `frame` (whose first offset is `seg.nextOffset`) at the end of the segment, then its index
 * entry when one is due. A write that fails part-way is cut off again, so no partial frame is left
 * for a later writer to find. The fd is O_APPEND: bytes land after whatever is in the file, so a
 * writer can never overwrite another's frame; the size check after the write confirms the frame
 * landed where its offsets say (else it throws, and readers skip the misplaced frame: its base
 * offset is behind theirs).
 */
export function writeFrame(seg: ActiveSegment, frame: Buffer, records: number): void {
  try {
    writeAll(seg.fd, frame, 0, frame.length, null)
  } catch (e) {
    cutBack(seg.fd, seg.size)
    throw backendError(`Cannot append to ${seg.path}`, e)
  }
  const at = seg.size
  if (fstatSync(seg.fd).size !== at + frame.length && !landedAt(seg.fd, frame, at)) {
    throw backendError(
      `Append to ${seg.path} raced with another writer`,
      Object.assign(new Error('frame not at its position'), { code: 'EAGAIN' }),
    )
  }
  if (at === 0 || Math.floor(seg.lastFrameStart / INDEX_INTERVAL_BYTES) < Math.floor(at / INDEX_INTERVAL_BYTES)) {
    if (at > 0) seg.times.add(seg.nextOffset, at, frameIdAt(frame, 0))
    addIndexEntry(seg, seg.nextOffset, at)
  }
  if (records > 0) seg.times.saw(frame.readDoubleLE(36))
  seg.lastFrameStart = at
  seg.size = at + frame.length
  seg.nextOffset += records
}

/** Seal a full segment and open its successor. A failed seal write is cut off; a failed create leaves a sealed segment the next writer follows. */
export function roll(
  seg: ActiveSegment,
  dir: string,
  topic: string,
  producerId: string,
  durable: boolean,
): ActiveSegment {
  const seal = encodeSeal(seg.nextOffset, producerId)
  try {
    writeAll(seg.fd, seal, 0, seal.length, null)
    if (durable) fsyncSync(seg.fd)
  } catch (e) {
    cutBack(seg.fd, seg.size)
    throw backendError(`Cannot seal segment ${seg.path}`, e)
  }
  const next = seg.nextOffset
  closeSegment(seg)
  const fresh = openSegment(dir, topic, next)
  if (durable) {
    try {
      syncDirSync(dir)
    } catch (e) {
      closeSegment(fresh)
      throw backendError(`Cannot sync directory ${dir}`, e)
    }
  }
  return fresh
}

export function closeSegment(seg: ActiveSegment): void {
  closeQuietly(seg.fd)
  closeQuietly(seg.idxFd)
  seg.times.close()
}

/** An index entry is an optimisation: when it cannot be written, the index only lags (longer scans). */
function addIndexEntry(seg: ActiveSegment, offset: number, position: number): void {
  const e = encodeIndexEntry(offset, position)
  try {
    writeAll(seg.idxFd, e, 0, e.length, null)
    seg.idxSize += e.length
  } catch {
    cutBack(seg.idxFd, seg.idxSize)
  }
}

/** Remove bytes written past `size` by a failed write (best effort: what remains is a clean tear). */
function cutBack(fd: number, size: number): void {
  try {
    ftruncateSync(fd, size)
  } catch {
    /* the next writer removes the torn bytes */
  }
}

function landedAt(fd: number, frame: Buffer, at: number): boolean {
  const b = Buffer.allocUnsafe(HEADER_BYTES)
  return readSync(fd, b, 0, HEADER_BYTES, at) === HEADER_BYTES && b.equals(frame.subarray(0, HEADER_BYTES))
}
