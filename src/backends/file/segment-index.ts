import { fstatSync, readFileSync, readSync } from 'node:fs'
import { FLAG_SEAL, HEADER_BYTES, frameIdAt, readFrameHeader } from './batch-format.js'

/** Sparse index entry: the first offset of a frame and the frame's byte position in its segment. */
export const INDEX_ENTRY_BYTES = 16

/** Bytes of segment data between two index entries. */
export const INDEX_INTERVAL_BYTES = 64 * 1024

export function encodeIndexEntry(offset: number, position: number): Buffer {
  const b = Buffer.allocUnsafe(INDEX_ENTRY_BYTES)
  b.writeDoubleLE(offset, 0)
  b.writeDoubleLE(position, 8)
  return b
}

/**
 * Byte position in segment `fd` (of `segmentSize` bytes) to start scanning from to reach `offset`:
 * the last index entry at or before it (0 without an index). Only whole entries count, and the entry
 * picked is checked against the segment first: one that does not point at a frame holding the
 * offset it names (a damaged index) is passed over for an earlier one, else 0, so a bad index only
 * lengthens the scan and never makes a reader start mid-frame or past records. An index that lags
 * its segment (a writer died between the two writes) also only means a longer scan. O(log n) in
 * the entries, plus one header read.
 */
export function indexLookup(idxPath: string, offset: number, fd: number, segmentSize: number): number {
  let buf: Buffer
  try {
    buf = readFileSync(idxPath)
  } catch {
    return 0
  }
  let lo = 0
  let hi = Math.floor(buf.length / INDEX_ENTRY_BYTES) - 1
  let hit = -1
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    if (buf.readDoubleLE(mid * INDEX_ENTRY_BYTES) <= offset) {
      hit = mid
      lo = mid + 1
    } else hi = mid - 1
  }
  const head = Buffer.allocUnsafe(HEADER_BYTES)
  for (let i = hit; i >= 0 && i > hit - FALLBACKS; i--) {
    const o = buf.readDoubleLE(i * INDEX_ENTRY_BYTES)
    const position = buf.readDoubleLE(i * INDEX_ENTRY_BYTES + 8)
    if (o <= offset && isFrameOf(fd, position, o, segmentSize, head)) return position
  }
  return 0
}

/** How many entries before the one wanted are tried when it is bad (then the scan starts at 0). */
export const FALLBACKS = 8

/**
 * Whether byte `position` of segment `fd` (`size` bytes) starts a records frame (not a seal) whose
 * first offset is `offset` (and, when given, whose bytes are those of frame `id`, see `frameIdAt`):
 * what every index entry must point at. `head` is scratch space.
 */
export function isFrameOf(
  fd: number,
  position: number,
  offset: number,
  size: number,
  head: Buffer = Buffer.allocUnsafe(HEADER_BYTES),
  id?: number,
): boolean {
  if (!Number.isSafeInteger(position) || position < 0 || position >= size) return false
  const got = readSync(fd, head, 0, HEADER_BYTES, position)
  // A valid header of a frame longer than these bytes reads as 'short'; a whole one as an object.
  const h = readFrameHeader(head, 0, got)
  if (!((h === 'short' && got === HEADER_BYTES) || typeof h === 'object')) return false
  return (
    head.readDoubleLE(16) === offset &&
    (head.readUInt8(13) & FLAG_SEAL) === 0 &&
    (id === undefined || frameIdAt(head, 0) === id)
  )
}

/**
 * The last entry of an index (open as `idxFd`, `idxBytes` of whole entries) that points at a frame
 * of segment `fd` holding the offset it names. Entries are checked before they are trusted: a bogus
 * one (pointing mid-frame, past the end, or at a frame of another offset) is passed over, so nobody
 * ever scans, or cuts, from a wrong position.
 */
export function lastIndexedFrame(
  fd: number,
  idxFd: number,
  idxBytes: number,
): { position: number; offset: number } | undefined {
  const size = fstatSync(fd).size
  const entry = Buffer.allocUnsafe(INDEX_ENTRY_BYTES)
  const head = Buffer.allocUnsafe(HEADER_BYTES)
  const last = Math.floor(idxBytes / INDEX_ENTRY_BYTES) - 1
  for (let i = last; i >= 0 && i > last - FALLBACKS; i--) {
    readSync(idxFd, entry, 0, INDEX_ENTRY_BYTES, i * INDEX_ENTRY_BYTES)
    const offset = entry.readDoubleLE(0)
    const position = entry.readDoubleLE(8)
    if (isFrameOf(fd, position, offset, size, head)) return { position, offset }
  }
  return undefined
}

/** `twainmq check`: the entries of index `path` as [offset, position] pairs, or undefined without an index file (noted). */
export function readIndexEntries(path: string, notes: string[]): Array<[number, number]> | undefined {
  let buf: Buffer
  try {
    buf = readFileSync(path)
  } catch {
    notes.push(`no index ${path} (readers scan from the segment's start)`)
    return undefined
  }
  if (buf.length % INDEX_ENTRY_BYTES) notes.push(`index ${path} ends in a partial entry (the next append removes it)`)
  const out: Array<[number, number]> = []
  for (let p = 0; p + INDEX_ENTRY_BYTES <= buf.length; p += INDEX_ENTRY_BYTES)
    out.push([buf.readDoubleLE(p), buf.readDoubleLE(p + 8)])
  return out
}
