/**
 * File time seeks walk frame headers (`frameForTime`) and decode one frame: on logs with timestamps
 * out of order (within frames and across them), several segments and trims, `offsetForTime` answers
 * exactly what the forward decode it replaced answers (segments binary-searched by their first
 * frame's first timestamp, then every message read from there to the first with `timestamp >= time`).
 */
import { openSync, closeSync, readSync } from 'node:fs'
import fc from 'fast-check'
import { afterAll, describe, expect, it } from 'vitest'
import { readFrameHeader } from '../../src/backends/file/batch-format.js'
import { FileBackend } from '../../src/backends/file/file-backend.js'
import { partitionDir, segmentPath } from '../../src/backends/file/layout.js'
import { listSegmentsSync } from '../../src/backends/file/segment-list.js'
import type { Backend } from '../../src/backends/backend.js'
import { texts, topicMeta } from '../contract/fixture.js'
import { tempDir } from '../helpers/tmp.js'

const dirs: Array<() => void> = []
afterAll(() => {
  for (const rm of dirs.splice(0)) rm()
})

function firstTimestamp(dir: string, base: number): number | undefined {
  const fd = openSync(segmentPath(dir, base), 'r')
  try {
    const b = Buffer.alloc(48)
    readSync(fd, b, 0, 48, 0)
    const h = readFrameHeader(b, 0, Number.MAX_SAFE_INTEGER)
    return typeof h === 'object' && h.count > 0 ? h.firstTimestamp : undefined
  } finally {
    closeSync(fd)
  }
}

/** The former algorithm, step by step over every message. */
async function reference(b: Backend, dir: string, time: number): Promise<number> {
  const bases = listSegmentsSync(dir, 't')
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
  const start = (await b.offsets('t'))[0]?.start as number
  const r = await b.openReader('t', 0, Math.max(start, bases[from] ?? 0))
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

describe('file offsetForTime', () => {
  it('equals the full forward decode on random logs with out-of-order timestamps, segments and trims', async () => {
    const t0 = 1_700_000_000_000
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(fc.integer({ min: 0, max: 200 }), { minLength: 1, maxLength: 20 }), { minLength: 1, maxLength: 15 }),
        fc.integer({ min: 0, max: 60 }),
        fc.array(fc.integer({ min: -10, max: 210 }), { minLength: 1, maxLength: 12 }),
        async (batches, trim, times) => {
          const t = tempDir('twainmq-time-seek-')
          dirs.push(t.remove)
          const b = new FileBackend(t.dir, { pollMs: 50, segmentBytes: 1024 })
          await b.init()
          try {
            const meta = topicMeta('t')
            await b.createTopic(meta)
            for (const stamps of batches) {
              const recs = texts(meta, 'v', stamps.length).map((r, i) => ({ ...r, timestamp: t0 + (stamps[i] as number) }))
              await b.append('t', 0, recs, 'p')
            }
            if (trim > 0) await b.trimBefore('t', 0, trim)
            const dir = partitionDir(t.dir, 't', 0)
            for (const dt of times) expect(await b.offsetForTime('t', 0, t0 + dt)).toBe(await reference(b, dir, t0 + dt))
          } finally {
            await b.close()
          }
        },
      ),
      { numRuns: 60 },
    )
  })
})
