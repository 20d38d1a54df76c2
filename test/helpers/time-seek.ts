import { closeSync, openSync, readSync } from 'node:fs'
import { readFrameHeader, type FrameHeader } from '../../src/backends/file/batch-format.js'
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

/**
 * What `offsetForTime` answers, the slow way (the model): every message read from the partition's
 * start to the first with `timestamp >= time`; the end offset if none. Timestamps need not grow
 * with offsets, so no segment may be passed over by its first timestamp.
 */
export async function referenceOffsetForTime(b: Backend, _dir: string, topic: string, time: number): Promise<number> {
  const start = (await b.offsets(topic))[0]?.start as number
  const r = await b.openReader(topic, 0, start)
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
