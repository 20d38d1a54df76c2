import { readFileSync } from 'node:fs'

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
 * Byte position in a segment to start scanning from to reach `offset`: the last index entry at or
 * before it (0 without an index). Only whole entries count; an index that lags the segment (a
 * writer died between the two writes) only means a longer scan. O(log n) in the entries.
 */
export function indexLookup(idxPath: string, offset: number, segmentSize: number): number {
  let buf: Buffer
  try {
    buf = readFileSync(idxPath)
  } catch {
    return 0
  }
  let lo = 0
  let hi = Math.floor(buf.length / INDEX_ENTRY_BYTES) - 1
  let best = 0
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    const o = buf.readDoubleLE(mid * INDEX_ENTRY_BYTES)
    if (o <= offset) {
      const pos = buf.readDoubleLE(mid * INDEX_ENTRY_BYTES + 8)
      if (pos <= segmentSize) best = pos
      lo = mid + 1
    } else hi = mid - 1
  }
  return best
}
