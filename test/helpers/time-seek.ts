import { closeSync, openSync, readSync } from 'node:fs'
import { readFrameHeader, type FrameHeader } from '../../src/backends/file/batch-format.js'
import { segmentPath } from '../../src/backends/file/layout.js'
import { listSegmentsSync } from '../../src/backends/file/segment-list.js'
import type { Backend } from '../../src/backends/backend.js'

/** Every whole frame of segment `path` in file order, with its byte position (headers only). */
export function segmentFrames(path: string): Array<{ pos: number; h: FrameHeader }> {
  const fd = openSync(path, 'r')
  const out: Array<{ pos: number; h: FrameHeader }> = []
  try {
    const head = Buffer.alloc(48)
    for (let pos = 0; ;) {
      if (readSync(fd, head, 0, 48, pos) < 48) return out
      const h = readFrameHeader(head, 0, Number.MAX_SAFE_INTEGER)
      if (typeof h !== 'object') return out
      out.push({ pos, h })
      pos += h.length
    }
  } finally {
    closeSync(fd)
  }
}

function firstTimestamp(dir: string, base: number): number | undefined {
  const h = segmentFrames(segmentPath(dir, base))[0]?.h
  return h && h.count > 0 ? h.firstTimestamp : undefined
}

/**
 * What file `offsetForTime` answers, the slow way: segments binary-searched by their first frame's
 * first timestamp (as before decision 163), then every message read from there (from the
 * partition's start, if later) to the first with `timestamp >= time`; the end offset if none.
 */
export async function referenceOffsetForTime(b: Backend, dir: string, topic: string, time: number): Promise<number> {
  const bases = listSegmentsSync(dir, topic)
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
  const start = (await b.offsets(topic))[0]?.start as number
  const r = await b.openReader(topic, 0, Math.max(start, bases[from] ?? 0))
  try {
    for (;;) {
      const got = await r.read(1000)
      if (got.length === 0) return r.next
      for (const m of got) if (m.timestamp >= time) return m.offset
    }
  } finally {
    await r.close()
  }
}
