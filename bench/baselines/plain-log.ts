/*
 * The plain-Node baseline for the file suite: the same records (key, timestamp, UTF-8 value) framed
 * as `u32 length | u16/u32 key | f64 timestamp | value` into 64 KiB buffers written with
 * `fs.writeSync`, and read back in 64 KiB chunks, each record decoded into `{ key, timestamp, value }`.
 * Written plainly but sensibly: no per-record syscalls, no extra copies, no CRC, no offsets, no lock.
 */
import { closeSync, openSync, readSync, writeSync } from 'node:fs'

export const CHUNK = 64 * 1024

export type KeyWidth = 2 | 4

export interface PlainRecord {
  key: number
  timestamp: number
  value: string
}

export interface PlainWriteResult {
  records: number
  bytes: number
}

/**
 * Write `count` records: key = `keyOf(i)`, timestamp = `Date.now()`, value = `value`.
 * `onProgress(i)` is called every 64 Ki records.
 */
export function plainWrite(
  path: string,
  count: number,
  keyWidth: KeyWidth,
  keyOf: (i: number) => number,
  value: string,
  onProgress?: (i: number) => void,
): PlainWriteResult {
  const fd = openSync(path, 'w')
  const maxRecord = 4 + keyWidth + 8 + Buffer.byteLength(value, 'utf8')
  const buf = Buffer.allocUnsafe(Math.max(CHUNK, maxRecord))
  let pos = 0
  let bytes = 0
  try {
    for (let i = 0; i < count; i++) {
      if (pos + maxRecord > buf.length) {
        writeSync(fd, buf, 0, pos)
        bytes += pos
        pos = 0
        if (onProgress && (i & 0xffff) < 512) onProgress(i)
      }
      const start = pos
      pos += 4
      if (keyWidth === 4) buf.writeUInt32LE(keyOf(i), pos)
      else buf.writeUInt16LE(keyOf(i), pos)
      pos += keyWidth
      buf.writeDoubleLE(Date.now(), pos)
      pos += 8
      pos += buf.write(value, pos, 'utf8')
      buf.writeUInt32LE(pos - start - 4, start)
    }
    if (pos > 0) {
      writeSync(fd, buf, 0, pos)
      bytes += pos
    }
  } finally {
    closeSync(fd)
  }
  return { records: count, bytes }
}

/**
 * Read a file written by `plainWrite` in 64 KiB chunks; each chunk's whole records are decoded into
 * an array of `PlainRecord` handed to `onBatch` (a record cut by the chunk end is carried over).
 * Returns the number of records.
 */
export function plainRead(path: string, keyWidth: KeyWidth, onBatch: (records: PlainRecord[]) => void): number {
  const fd = openSync(path, 'r')
  let buf = Buffer.allocUnsafe(CHUNK)
  let have = 0 // carried-over bytes at the front of buf
  let filePos = 0
  let total = 0
  const valueAt = 4 + keyWidth + 8
  try {
    for (;;) {
      const n = readSync(fd, buf, have, buf.length - have, filePos)
      if (n === 0) {
        if (have > 0) throw new Error(`${path}: ${have} trailing bytes do not form a whole record`)
        return total
      }
      filePos += n
      const end = have + n
      let p = 0
      const batch: PlainRecord[] = []
      while (end - p >= 4) {
        const len = buf.readUInt32LE(p)
        const next = p + 4 + len
        if (next > end) break
        batch.push({
          key: keyWidth === 4 ? buf.readUInt32LE(p + 4) : buf.readUInt16LE(p + 4),
          timestamp: buf.readDoubleLE(p + 4 + keyWidth),
          value: buf.toString('utf8', p + valueAt, next),
        })
        p = next
      }
      total += batch.length
      onBatch(batch)
      have = end - p
      if (have > 0) {
        if (p === 0 && have === buf.length) {
          // One record larger than the buffer: grow.
          const bigger = Buffer.allocUnsafe(Math.max(buf.length * 2, 4 + buf.readUInt32LE(0)))
          buf.copy(bigger, 0, 0, have)
          buf = bigger
        } else buf.copy(buf, 0, p, end)
      }
    }
  } finally {
    closeSync(fd)
  }
}
