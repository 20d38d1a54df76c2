import { recordBytes, typeBytes, writeRecord, type AddedHeaders } from '../record-codec.js'
import type { SourcePosition } from '../backend.js'
import { ID_HEADER, type RecordInput } from '../record.js'

/**
 * How an append's records become the arguments of its script calls (`appender.ts`): the records
 * encoded part by part, and the per-record ids and source positions of the parts that take them.
 */

/** Records per script call: larger appends go as several calls in one pipeline (a few ms of Lua each). */
export const PART_RECORDS = 2000
/** Bytes per script call, at most (a single larger record is a part of its own). */
export const PART_BYTES = 2 * 1024 * 1024

/**
 * Records encoded into parts of at most PART_RECORDS / PART_BYTES, each part one buffer of
 * concatenated records (with `added`, each record carries that header too).
 */
export function encodeParts(
  records: readonly RecordInput[],
  added?: AddedHeaders,
): { parts: Buffer[]; counts: number[] } {
  const parts: Buffer[] = []
  const counts: number[] = []
  const types: Array<Buffer | undefined> = new Array(records.length)
  for (let i = 0; i < records.length;) {
    let size = 0
    let j = i
    while (j < records.length && j - i < PART_RECORDS && (j === i || size < PART_BYTES)) {
      const r = records[j] as RecordInput
      const t = typeBytes(r)
      types[j] = t
      size += recordBytes(r, t)
      if (added !== undefined) size += added.bound(j)
      j++
    }
    const buf = Buffer.allocUnsafe(size) // a bound: unmeasured strings are measured as they are written
    let pos = 0
    for (let k = i; k < j; k++) pos = writeRecord(buf, pos, records[k] as RecordInput, types[k], 0, added, k)
    parts.push(pos === size ? buf : buf.subarray(0, pos))
    counts.push(j - i)
    i = j
  }
  return { parts, counts }
}

/**
 * The ids of `records[at .. at + n)` as append-ids-7.lua takes them (one argument): of each record
 * with an id, its index in the part (from 1, u32 LE), the id's UTF-8 length (u16 LE), the id.
 */
export function packIds(records: readonly RecordInput[], at: number, n: number): Buffer {
  const ids: Array<[number, string]> = []
  let bytes = 0
  for (let k = 0; k < n; k++) {
    const id = (records[at + k] as RecordInput).headers?.[ID_HEADER]
    if (id === undefined) continue
    ids.push([k + 1, id])
    bytes += 6 + Buffer.byteLength(id, 'utf8')
  }
  const out = Buffer.allocUnsafe(bytes)
  let pos = 0
  for (const [index, id] of ids) {
    out.writeUInt32LE(index, pos)
    const len = out.write(id, pos + 6, 'utf8')
    out.writeUInt16LE(len, pos + 4)
    pos += 6 + len
  }
  return out
}

/**
 * The positions of `positions[at .. at + n)` as append-src-7.lua takes them: each one's input offset
 * and sequence number as two little-endian doubles (the script reads them with one `struct.unpack`
 * each, no text parsed).
 */
export function packPositions(positions: readonly SourcePosition[], at: number, n: number): Buffer {
  const out = Buffer.allocUnsafe(16 * n)
  for (let k = 0; k < n; k++) {
    const p = positions[at + k] as SourcePosition
    out.writeDoubleLE(p.offset, 16 * k)
    out.writeDoubleLE(p.seq, 16 * k + 8)
  }
  return out
}
