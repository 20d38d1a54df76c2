import { closeSync, openSync, readSync, statSync } from 'node:fs'
import { backendError } from '../../core/errors.js'
import type { Chunk, ChunkDirectory } from './chunks.js'
import { TS_CHARS, decodeSecondsField, secondsToMs, type LineFormat } from './line-codec.js'

const WINDOW = 256 * 1024

/**
 * Call `visit(offset, seconds)` for each complete line of chunk `c` from its first line, decoding
 * only the TS field (no inflate). Lines whose TS does not decode get `NaN`. Stops when `visit`
 * returns true; returns the offset of the line it stopped at (or after the last line looked at).
 */
function scanTimestamps(
  path: string,
  c: Chunk,
  f: LineFormat,
  limit: number,
  visit: (offset: number, seconds: number) => boolean,
  window = WINDOW,
): { offset: number; stopped: boolean } {
  let fd: number
  try {
    fd = openSync(path, 'r')
  } catch (e) {
    throw backendError(`Cannot open ${path}`, e)
  }
  try {
    let buf = Buffer.allocUnsafe(window)
    let pos = 0
    let offset = c.start
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, pos)
      const view = buf.subarray(0, n)
      let at = 0
      for (let nl = view.indexOf(10); nl >= 0 && offset < limit; nl = view.indexOf(10, at)) {
        let seconds = Number.NaN
        if (nl - at >= f.keyChars + TS_CHARS) {
          try {
            seconds = decodeSecondsField(view, at + f.keyChars)
          } catch {
            /* a corrupt TS: not comparable */
          }
        }
        if (visit(offset, seconds)) return { offset, stopped: true }
        offset++
        at = nl + 1
      }
      if (offset >= limit) return { offset, stopped: false }
      if (at === 0) {
        if (n < buf.length) return { offset, stopped: false } // the end of the complete lines
        buf = Buffer.allocUnsafe(buf.length * 2)
        continue
      }
      pos += at
    }
  } finally {
    closeSync(fd)
  }
}

/** Newest times (ms) of chunks, by path, with the size and modification time they were read at. */
const known = new Map<string, { size: number; mtimeMs: number; max: number }>()
const KEEP = 10_000

/**
 * The newest time (ms) of the lines of chunk `c` up to offset `limit`, read from its TS fields
 * once while the file keeps its size and modification time; Infinity when a TS does not decode
 * (such a chunk is never passed over).
 */
function chunkMaxMs(dir: ChunkDirectory, c: Chunk, f: LineFormat, limit: number): number {
  const path = dir.path(c)
  let st
  try {
    st = statSync(path)
  } catch {
    return Infinity
  }
  const had = known.get(path)
  if (had !== undefined && had.size === st.size && had.mtimeMs === st.mtimeMs) return had.max
  let max = -Infinity
  scanTimestamps(path, c, f, limit, (_o, seconds) => {
    const ms = Number.isNaN(seconds) ? Infinity : secondsToMs(seconds)
    if (ms > max) max = ms
    return false
  })
  if (known.size >= KEEP) known.delete(known.keys().next().value as string)
  known.set(path, { size: st.size, mtimeMs: st.mtimeMs, max })
  return max
}

/**
 * The offset of the first message with `timestamp >= time` (ms), or the partition's end offset,
 * whatever the order of timestamps (a send may give its own). Chunks (one UTC day of appends
 * each) whose newest time is below `time` are passed over (`chunkMaxMs`: read once per chunk and
 * process while it does not change), then TS fields alone are read from the first other chunk.
 */
export function offsetForTimeSync(
  dir: ChunkDirectory,
  partition: number,
  f: LineFormat,
  time: number,
  end: number,
): number {
  const chunks = dir.partition(partition)
  if (chunks.length === 0) return 0
  for (let i = 0; i < chunks.length; i++) {
    const c = chunks[i] as Chunk
    const limit = i + 1 < chunks.length ? (chunks[i + 1] as Chunk).start : Infinity
    if (i + 1 < chunks.length && chunkMaxMs(dir, c, f, limit) < time) continue
    const r = scanTimestamps(dir.path(c), c, f, limit, (_o, seconds) => secondsToMs(seconds) >= time)
    if (r.stopped) return r.offset
  }
  return end
}
