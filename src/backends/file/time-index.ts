import { readFileSync } from 'node:fs'
import { crc32 } from 'node:zlib'
import { HEADER_BYTES } from './batch-format.js'
import { FALLBACKS, isFrameOf } from './segment-index.js'

/*
 * The time index of a segment, `<base>.tix` (docs/format.md, decision 172): 32-byte entries, each a
 * claim about the bytes of the segment before one frame, checkable on its own:
 *    0 f64 offset      first offset of the frame at `position`
 *    8 f64 position    byte position of that frame in the segment
 *   16 f64 maxBefore   the largest `maxTimestamp` of the records frames that start before `position`
 *                      (-Infinity: none)
 *   24 u32 frameId     what identifies that frame's bytes (`frameIdAt`: its CRC xor its header
 *                      CRC): ties the entry to the very frame it was written for
 *   28 u32 CRC32 of bytes 0..27
 * Writers add one with each sparse-index entry after the segment's first frame. `maxBefore` is a
 * running maximum, so it never decreases along the segment, whatever the order of timestamps: a
 * binary search finds the last entry whose `maxBefore` is below a time, and no frame before that
 * entry's frame can hold a record at or after the time. Only entries that pass their CRC and point
 * at their frame are believed, so a torn, damaged or stale entry only makes a seek walk further.
 */
export const TIME_ENTRY_BYTES = 32

export interface TimeEntry {
  offset: number
  position: number
  maxBefore: number
  frameId: number
}

export function encodeTimeEntry(e: TimeEntry): Buffer {
  const b = Buffer.allocUnsafe(TIME_ENTRY_BYTES)
  b.writeDoubleLE(e.offset, 0)
  b.writeDoubleLE(e.position, 8)
  b.writeDoubleLE(e.maxBefore, 16)
  b.writeUInt32LE(e.frameId, 24)
  b.writeUInt32LE(crc32(b.subarray(0, 28)), 28)
  return b
}

/** Entry `i` of the index bytes `buf`, or undefined when it fails its CRC (damaged or torn). */
export function timeEntryAt(buf: Buffer, i: number): TimeEntry | undefined {
  const p = i * TIME_ENTRY_BYTES
  if (p + TIME_ENTRY_BYTES > buf.length || crc32(buf.subarray(p, p + 28)) !== buf.readUInt32LE(p + 28)) return undefined
  return {
    offset: buf.readDoubleLE(p),
    position: buf.readDoubleLE(p + 8),
    maxBefore: buf.readDoubleLE(p + 16),
    frameId: buf.readUInt32LE(p + 24),
  }
}

/** Whole entries in the index bytes `buf` (a torn last entry does not count). */
export const timeEntries = (buf: Buffer): number => Math.floor(buf.length / TIME_ENTRY_BYTES)

/** The bytes of time index `path`; empty when there is none (segments written before decision 172). */
export function readTimeIndex(path: string): Buffer {
  try {
    return readFileSync(path)
  } catch {
    return Buffer.alloc(0)
  }
}

/** Whether entry `e` points at its frame in segment `fd` (`size` bytes): a records frame of its offset and bytes. */
export const entryHolds = (fd: number, e: TimeEntry, size: number, head: Buffer): boolean =>
  isFrameOf(fd, e.position, e.offset, size, head, e.frameId)

/**
 * Where a time seek in segment `fd` (`size` bytes, time index `path`) can start: the frame of the
 * last entry whose `maxBefore` is below `time`, so every records frame before it is below `time`.
 * An entry that fails its checks is passed over for an earlier one (a few), then undefined (no
 * entry, or none below `time`): the seek walks from the sparse index's position as before.
 * O(log n) in the entries, plus one header read.
 */
export function timeLookup(
  path: string,
  time: number,
  fd: number,
  size: number,
): { position: number; offset: number } | undefined {
  const buf = readTimeIndex(path)
  let lo = 0
  let hi = timeEntries(buf) - 1
  let hit = -1
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    if (buf.readDoubleLE(mid * TIME_ENTRY_BYTES + 16) < time) {
      hit = mid
      lo = mid + 1
    } else hi = mid - 1
  }
  const head = Buffer.allocUnsafe(HEADER_BYTES)
  for (let i = hit; i >= 0 && i > hit - FALLBACKS; i--) {
    const e = timeEntryAt(buf, i)
    if (e && e.maxBefore < time && entryHolds(fd, e, size, head)) return { position: e.position, offset: e.offset }
  }
  return undefined
}
