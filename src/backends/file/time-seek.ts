import { closeSync, openSync, readSync } from 'node:fs'
import type { KeyCodec } from '../../core/keys.js'
import type { RawRecord } from '../record.js'
import { HEADER_BYTES, frameCrcOk, rawBatch, readFrameHeader } from './batch-format.js'
import { segmentPath } from './layout.js'
import { readFull } from './safe-fs.js'
import { damageError } from './segment-scan.js'
import { frameForTime, type FramePlace } from './frame-walk.js'
import { FilePartitionReader } from './reader.js'
import { basesOf, listPartitionSync } from './segment-list.js'
import { partitionStartSync } from './partition-span.js'

/** The first timestamp of segment `base`'s first frame (synchronous: a few page-cache reads per segment probed). */
function firstTimestamp(dir: string, base: number): number | undefined {
  let fd: number
  try {
    fd = openSync(segmentPath(dir, base), 'r')
  } catch {
    return undefined
  }
  try {
    const b = Buffer.alloc(HEADER_BYTES)
    const bytesRead = readSync(fd, b, 0, HEADER_BYTES, 0)
    // Only the header is needed; pretend the frame fits so 'short' does not hide it.
    const h = readFrameHeader(b, 0, bytesRead < HEADER_BYTES ? bytesRead : Number.MAX_SAFE_INTEGER)
    // A damaged first header must not read as "no timestamp": the search would quietly skip it.
    if (h === 'bad')
      throw damageError(segmentPath(dir, base), { position: 0, offset: base, reason: 'not a valid frame header' })
    return typeof h === 'object' && h.count > 0 ? h.firstTimestamp : undefined
  } finally {
    closeSync(fd)
  }
}

/**
 * The first offset ≥ `offset` of a record at or after `time` in the frame the walk found at
 * `at`, 'none' when it has none; undefined when that frame is not there as the walk saw it or
 * fails its CRC: the caller then reads it with a reader, which reports damage as every read does.
 * Reads the frame alone and decodes no value.
 */
function firstInFrame(
  dir: string,
  at: FramePlace,
  offset: number,
  end: number,
  time: number,
): number | 'none' | undefined {
  let fd: number
  try {
    fd = openSync(segmentPath(dir, at.base), 'r')
  } catch {
    return undefined
  }
  try {
    const buf = Buffer.allocUnsafe(at.length)
    if (readFull(fd, buf, at.length, at.position) < at.length) return undefined
    const h = readFrameHeader(buf, 0, at.length)
    if (
      typeof h !== 'object' ||
      h.length !== at.length ||
      h.baseOffset + h.count !== end ||
      !frameCrcOk(buf, 0, h.length)
    )
      return undefined
    const records: RawRecord[] = []
    rawBatch(buf, 0, h, offset, h.count, records)
    for (const r of records) if (r.timestamp >= time) return r.offset
    return 'none'
  } finally {
    closeSync(fd)
  }
}

/**
 * Offset of the first message with `timestamp >= time`: binary search over segments by their first
 * timestamp, then, from the chosen segment on, a walk over frame headers (from the segment's time
 * index entry for `time`) to the first frame whose max timestamp reaches `time` (`frameForTime`),
 * and a decode of that frame only (of the next such frame when its records at or after `time` lie
 * below the partition's start).
 */
export async function offsetForTime(
  dir: string,
  topic: string,
  partition: number,
  keys: KeyCodec,
  time: number,
): Promise<number> {
  // One listing, synchronously (a thread-pool round trip cost more than the few names).
  const names = listPartitionSync(dir, topic)
  const bases = basesOf(names)
  let lo = 0
  let hi = bases.length - 1
  let from = 0
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    const t = firstTimestamp(dir, bases[mid] as number)
    if (t !== undefined && t < time) {
      from = mid
      lo = mid + 1
    } else hi = mid - 1
  }
  const start = partitionStartSync(dir, topic, names)
  let at = Math.max(start, bases[from] ?? 0)
  let reader: FilePartitionReader | undefined
  try {
    for (;;) {
      const frame = frameForTime(dir, bases, at, time)
      const end = frame.end ?? Infinity // unsure: read forward to the end, as a history does
      const got = frame.at && firstInFrame(dir, frame.at, frame.offset, end, time)
      if (typeof got === 'number') return got
      if (got === undefined) {
        reader ??= new FilePartitionReader(dir, topic, partition, keys, at)
        reader.seek(frame.offset)
        while (reader.next < end) {
          const batch = await reader.readRaw(Math.min(4096, end - reader.next))
          if (batch.length === 0) return reader.next
          for (const m of batch) if (m.timestamp >= time) return m.offset
        }
      }
      at = end
    }
  } finally {
    await reader?.close()
  }
}
