import fc from 'fast-check'
import { readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { checkPartition } from '../src/backends/file/check.js'
import { FileBackend } from '../src/backends/file/file-backend.js'
import { partitionDir } from '../src/backends/file/layout.js'
import { repairPartition } from '../src/backends/file/repair.js'
import { TIME_ENTRY_BYTES, encodeTimeEntry, timeEntries, timeEntryAt } from '../src/backends/file/time-index.js'
import { records, topicMeta } from '../test/contract/fixture.js'
import { referenceOffsetForTime } from '../test/helpers/time-seek.js'
import { tempDir } from '../test/helpers/tmp.js'

/*
 * File time seeks with the time index (decision 172): on random logs whose timestamps go back and
 * forth within and across frames, with frames from a few bytes to more than the index interval,
 * several segments, a trim, and every kind of harm to the time index (torn, flipped, lagging,
 * missing, stale: CRC-valid entries that no longer match their frame), `offsetForTime` answers
 * exactly what a forward decode answers, before and after a writer continues the log; `check`
 * reports exactly the harm that leaves entries that do not hold, and `repair` clears it.
 */

const T0 = 1_700_000_000_000
const meta = topicMeta('t', { maxMessageBytes: 4 * 1024 * 1024 })
const dirs: Array<() => void> = []
afterAll(() => {
  for (const rm of dirs.splice(0)) rm()
})

type Batch = Array<{ dt: number; size: number }>
const batchArb: fc.Arbitrary<Batch> = fc.array(
  fc.record({ dt: fc.integer({ min: 0, max: 1000 }), size: fc.constantFrom(8, 3000, 30_000, 70_000) }),
  { minLength: 1, maxLength: 5 },
)
const harmArb = fc.constantFrom('none', 'truncate', 'flip', 'lag', 'missing', 'stale')
type Harm = 'none' | 'truncate' | 'flip' | 'lag' | 'missing' | 'stale'

async function append(b: FileBackend, batches: Batch[]): Promise<void> {
  for (const batch of batches) {
    const recs = records(
      meta,
      batch.map((r) => 'v'.repeat(r.size)),
    ).map((r, i) => ({ ...r, timestamp: T0 + (batch[i] as Batch[number]).dt }))
    await b.append('t', 0, recs, 'p')
  }
}

/** Harm every time index of `dir`; whether an entry that does not hold is left (what check must report). */
function harm(dir: string, how: Harm, cut: number): boolean {
  let bad = false
  for (const name of readdirSync(dir).filter((n) => n.endsWith('.tix'))) {
    const path = join(dir, name)
    const buf = readFileSync(path)
    const n = timeEntries(buf)
    if (how === 'missing') rmSync(path)
    if (how === 'truncate') writeFileSync(path, buf.subarray(0, Math.floor(cut * buf.length)))
    if (how === 'lag') writeFileSync(path, buf.subarray(0, Math.floor(cut * n) * TIME_ENTRY_BYTES))
    if (how === 'flip' && n > 0) {
      const at = Math.min(buf.length - 1, Math.floor(cut * buf.length))
      buf[at] = (buf[at] as number) ^ 0x10
      writeFileSync(path, buf)
      bad = true
    }
    if (how === 'stale' && n > 0) {
      // Entries that would skip everything if believed: they name another frame's bytes.
      const out = Buffer.concat(
        Array.from({ length: n }, (_, i) => timeEntryAt(buf, i)).map((e) =>
          encodeTimeEntry({ ...e!, maxBefore: -Infinity, frameId: (e!.frameId ^ 1) >>> 0 }),
        ),
      )
      writeFileSync(path, out)
      bad = true
    }
  }
  return bad
}

async function expectExact(b: FileBackend, dir: string, times: number[]): Promise<void> {
  for (const dt of times)
    expect(await b.offsetForTime('t', 0, T0 + dt)).toBe(await referenceOffsetForTime(b, dir, 't', T0 + dt))
}

describe('time index properties', () => {
  it('seeks stay exact whatever the timestamps and whatever happened to the time index; check and repair agree', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(batchArb, { minLength: 1, maxLength: 30 }),
        fc.array(batchArb, { minLength: 0, maxLength: 8 }),
        harmArb,
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.integer({ min: 0, max: 40 }),
        fc.array(fc.integer({ min: -5, max: 1005 }), { minLength: 1, maxLength: 10 }),
        async (before, after, how, cut, trim, times) => {
          const t = tempDir('twainmq-tix-')
          dirs.push(t.remove)
          const dir = partitionDir(t.dir, 't', 0)
          const options = { pollMs: 50, segmentBytes: 256 * 1024 }
          let b = new FileBackend(t.dir, options)
          await b.init()
          await b.createTopic(meta)
          await append(b, before)
          await b.close()
          const bad = harm(dir, how as Harm, cut)
          // Before anyone writes again: a writer resuming on the index cuts entries at its end that
          // do not hold (time-index-writer.ts, resume), so later the harm may be gone.
          if (bad) expect(checkPartition(dir, 0, 't').damage.length).toBeGreaterThan(0)
          b = new FileBackend(t.dir, options)
          await b.init()
          try {
            const stamps = [...before, ...after].flat().map((r) => r.dt)
            await expectExact(b, dir, [...times, ...stamps.slice(0, 5)])
            await append(b, after) // a writer continues on the harmed index
            if (trim > 0) await b.trimBefore('t', 0, trim)
            await expectExact(b, dir, [...times, ...stamps.slice(-5)])
            const damage = checkPartition(dir, 0, 't').damage
            if (!bad) expect(damage).toEqual([])
            expect(damage.every((d) => d.kind === 'index' && d.file.endsWith('.tix'))).toBe(true)
            await repairPartition(dir, 0, 't')
            expect(checkPartition(dir, 0, 't').damage).toEqual([])
            await expectExact(b, dir, times)
          } finally {
            await b.close()
          }
        },
      ),
      { numRuns: 40 },
    )
  })
})
