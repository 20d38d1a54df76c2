import { closeSync, openSync } from 'node:fs'
import type { KeyCodec } from '../../core/keys.js'
import type { RawRecord } from '../record.js'
import { frameCrcOk, rawBatch, readFrameHeader } from './batch-format.js'
import { segmentPath } from './layout.js'
import { readFull } from './safe-fs.js'
import { frameForTime, type FramePlace } from './frame-walk.js'
import { FilePartitionReader } from './reader.js'
import { basesOf, listPartitionSync, segmentFor } from './segment-list.js'
import { segmentMaxTimestamp } from './segment-max.js'
import { partitionStartSync } from './partition-span.js'

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
 * Offset of the first message with `timestamp >= time`, whatever the order of timestamps: from the
 * partition's start, whole segments whose newest timestamp is below `time` are passed over
 * (`segmentMaxTimestamp`: remembered per segment, so a seek costs a stat per older segment), then,
 * from the first other segment on, a walk over frame headers (from the segment's time index entry
 * for `time`) to the first frame whose max timestamp reaches `time` (`frameForTime`), and a decode
 * of that frame only (of the next such frame when its records at or after `time` lie below the
 * partition's start).
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
  const start = partitionStartSync(dir, topic, names)
  let from = segmentFor(bases, start)
  while (from + 1 < bases.length) {
    const max = segmentMaxTimestamp(dir, bases[from] as number)
    if (max === undefined || max >= time) break
    from++
  }
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
