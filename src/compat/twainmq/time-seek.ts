import { closeSync, openSync, readSync } from 'node:fs'
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

/** Seconds of the first line of chunk `c` (NaN when it has none or it does not decode). */
function firstSeconds(dir: ChunkDirectory, c: Chunk, f: LineFormat): number {
  let s = Number.NaN
  scanTimestamps(
    dir.path(c),
    c,
    f,
    c.start + 1,
    (_o, seconds) => {
      s = seconds
      return true
    },
    4096, // one line (grown if longer)
  )
  return s
}

/**
 * The offset of the first message with `timestamp >= time` (ms), or the partition's end offset.
 * Chunks are one UTC day each, so the search starts at the last chunk whose first line is older
 * than `time` (found by binary search over first lines) and reads only TS fields from there.
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
  let lo = 0
  let hi = chunks.length - 1
  let from = 0
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    const s = firstSeconds(dir, chunks[mid] as Chunk, f)
    if (Number.isNaN(s) || secondsToMs(s) < time) {
      from = mid
      lo = mid + 1
    } else hi = mid - 1
  }
  for (let i = from; i < chunks.length; i++) {
    const c = chunks[i] as Chunk
    const limit = i + 1 < chunks.length ? (chunks[i + 1] as Chunk).start : Infinity
    const r = scanTimestamps(dir.path(c), c, f, limit, (_o, seconds) => secondsToMs(seconds) >= time)
    if (r.stopped) return r.offset
  }
  return end
}
