import { valueBound } from '../backends/record.js'
import type { PreparedRecord } from './send-record.js'

/** Most bytes (estimated) one write carries: a flush past it is written in several. */
export const MAX_BATCH_BYTES = 8 * 1024 * 1024

/** Estimated frame bytes of a record: what writes are split by. */
export function frameBytes(r: PreparedRecord): number {
  return r.keyBytes + valueBound(r) + 64
}

/**
 * File a prepared record under its partition (`only` holds a single-partition topic's records, so
 * no map work per record); returns its estimated frame bytes.
 */
export function place(
  r: PreparedRecord,
  only: PreparedRecord[] | undefined,
  byPartition: Map<number, PreparedRecord[]>,
): number {
  if (only) only.push(r)
  else {
    const g = byPartition.get(r.partition)
    if (g) g.push(r)
    else byPartition.set(r.partition, [r])
  }
  return frameBytes(r)
}

/** Where the write of `records` starting at `start` ends: at most `maxBatch` records and `MAX_BATCH_BYTES` (at least one record). */
export function chunkEnd(records: readonly PreparedRecord[], start: number, maxBatch: number): number {
  let end = start
  let bytes = 0
  while (end < records.length && end - start < maxBatch && (end === start || bytes < MAX_BATCH_BYTES)) {
    bytes += frameBytes(records[end] as PreparedRecord)
    end++
  }
  return end
}
