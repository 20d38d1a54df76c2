/**
 * The file backend's time index (`<base>.tix`, decision 172): its lookup against a brute-force walk
 * over every frame header, what `check` and `repair` do with entries that do not hold, a writer
 * after a lost tail, and trims taking the index with its segment.
 */
import {
  closeSync,
  existsSync,
  openSync,
  readFileSync,
  readdirSync,
  rmSync,
  truncateSync,
  writeFileSync,
} from 'node:fs'
import { afterEach, describe, expect, it } from 'vitest'
import { TopicCorruptError } from '../../src/core/errors.js'
import { checkPartition } from '../../src/backends/file/check.js'
import { FileBackend } from '../../src/backends/file/file-backend.js'
import { partitionDir, segmentPath, startFile, timeIndexPath } from '../../src/backends/file/layout.js'
import { partitionSpanSync, partitionStartSync } from '../../src/backends/file/partition-span.js'
import { repairPartition } from '../../src/backends/file/repair.js'
import { listSegmentsSync } from '../../src/backends/file/segment-list.js'
import {
  encodeTimeEntry,
  readTimeIndex,
  timeEntries,
  timeEntryAt,
  timeLookup,
} from '../../src/backends/file/time-index.js'
import { records, topicMeta } from '../contract/fixture.js'
import { referenceOffsetForTime, segmentFrames } from '../helpers/time-seek.js'
import { tempDir } from '../helpers/tmp.js'

const T0 = 1_700_000_000_000
const meta = topicMeta('t', { maxMessageBytes: 4 * 1024 * 1024 })
let cleanup: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const f of cleanup.reverse()) await f()
  cleanup = []
})

/** A deterministic pseudo-random stream (the same log on every run). */
function prng(seed: number): () => number {
  return () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31
}

async function backend(segmentBytes = 4 * 1024 * 1024): Promise<{ b: FileBackend; root: string; dir: string }> {
  const t = tempDir('twainmq-tix-unit-')
  const b = new FileBackend(t.dir, { pollMs: 50, segmentBytes })
  await b.init()
  cleanup.push(t.remove, () => b.close())
  await b.createTopic(meta)
  return { b, root: t.dir, dir: partitionDir(t.dir, 't', 0) }
}

type Frame = Array<{ size: number; at: number }>

/** `frames` frames of 1–4 records, values up to 40 KB, stamped T0 + 0..999 in any order. */
function randomFrames(frames: number, rnd: () => number): Frame[] {
  return Array.from({ length: frames }, () =>
    Array.from({ length: 1 + Math.floor(rnd() * 4) }, () => ({
      size: Math.floor(rnd() * 40_000),
      at: T0 + Math.floor(rnd() * 1000),
    })),
  )
}

async function append(b: FileBackend, frames: Frame[]): Promise<void> {
  for (const f of frames) {
    const recs = records(
      meta,
      f.map((r) => 'v'.repeat(r.size)),
    ).map((r, i) => ({ ...r, timestamp: (f[i] as Frame[number]).at }))
    await b.append('t', 0, recs, 'p')
  }
}

const randomLog = (b: FileBackend, frames: number, rnd: () => number) => append(b, randomFrames(frames, rnd))

async function expectExact(b: FileBackend, dir: string, times: number[]): Promise<void> {
  for (const t of times) expect(await b.offsetForTime('t', 0, t)).toBe(await referenceOffsetForTime(b, dir, 't', t))
}

const someTimes = (rnd: () => number, n = 40) => Array.from({ length: n }, () => T0 - 2 + Math.floor(rnd() * 1004))

describe('file time index', () => {
  it('points at the last entry before the first frame reaching the time, whatever the order of timestamps', async () => {
    const { b, dir } = await backend()
    const rnd = prng(11)
    await randomLog(b, 300, rnd)
    const base = listSegmentsSync(dir, 't')[0] as number
    const frames = segmentFrames(segmentPath(dir, base)).filter((f) => f.h.count > 0)
    const buf = readTimeIndex(timeIndexPath(dir, base))
    const entries = Array.from({ length: timeEntries(buf) }, (_, i) => timeEntryAt(buf, i)!)
    expect(entries.length).toBeGreaterThan(50)
    const fd = openSync(segmentPath(dir, base), 'r')
    cleanup.push(() => closeSync(fd))
    const size = readFileSync(segmentPath(dir, base)).length
    for (const time of someTimes(rnd, 200)) {
      const hit = timeLookup(timeIndexPath(dir, base), time, fd, size)
      // Brute force: the first frame holding a record at or after `time`, and the entries before it.
      const first = frames.find((f) => f.h.maxTimestamp >= time)
      const before = entries.filter((e) => e.position <= (first?.pos ?? Infinity))
      if (before.length === 0) expect(hit).toBeUndefined()
      else
        expect(hit).toEqual({
          position: before[before.length - 1]!.position,
          offset: before[before.length - 1]!.offset,
        })
      if (hit) for (const f of frames.filter((g) => g.pos < hit.position)) expect(f.h.maxTimestamp).toBeLessThan(time)
    }
    await expectExact(b, dir, someTimes(rnd))
  })

  it('check reports a flipped entry and a CRC-valid entry that understates the timestamps before it; repair rebuilds the index', async () => {
    const { b, dir } = await backend()
    const rnd = prng(5)
    await randomLog(b, 60, rnd)
    const tix = timeIndexPath(dir, 0)
    const buf = readTimeIndex(tix)
    expect(timeEntries(buf)).toBeGreaterThan(10)
    buf[3 * 32 + 5] = (buf[3 * 32 + 5] as number) ^ 1
    const lie = timeEntryAt(buf, 7)!
    encodeTimeEntry({ ...lie, maxBefore: T0 - 1 }).copy(buf, 7 * 32) // would skip every earlier frame, if believed
    writeFileSync(tix, buf)
    expect(
      checkPartition(dir, 0, 't').damage.map((d) => [
        d.file,
        d.from,
        d.reason.replace(/ \(.*| stamped .*| says .*/, ''),
      ]),
    ).toEqual([
      [tix, 96, 'time index entry 3 fails its CRC check'],
      [tix, 224, 'time index entry 7'],
    ])
    // Seeks pass over the flipped entry; an entry forged with a valid CRC at its intact frame is
    // believed by them: finding that is what `check` is for.
    const actions = await repairPartition(dir, 0, 't')
    expect(actions.join('\n')).toMatch(/moved the damaged .*\.tix to .*quarantine/)
    expect(actions.join('\n')).toMatch(/rebuilt the index .* and the time index .*\.tix \(\d+ entries\)/)
    expect(checkPartition(dir, 0, 't').damage).toEqual([])
    expect(readdirSync(dir).some((n) => n.startsWith('00000000000000000000.tix.quarantine-'))).toBe(true)
    await expectExact(b, dir, someTimes(rnd))
  })

  for (const lost of [3, 40]) {
    it(`a writer after a lost tail (${lost} frames gone, their index entries kept) never believes the stale entries`, async () => {
      const { b, root, dir } = await backend()
      const rnd = prng(9 + lost)
      const log = randomFrames(80, rnd)
      await append(b, log)
      await b.close()
      // A power cut kept the indexes but not the segment's last frames (cut at a frame boundary).
      const seg = segmentPath(dir, 0)
      const frames = segmentFrames(seg)
      truncateSync(seg, (frames[frames.length - lost] as { pos: number }).pos)
      const b2 = new FileBackend(root, { pollMs: 50, segmentBytes: 4 * 1024 * 1024 })
      await b2.init()
      cleanup.push(() => b2.close())
      // Sent again later: the same frames at the same positions with the same offsets, later stamps.
      await append(
        b2,
        log.slice(-lost).map((f) => f.map((r) => ({ ...r, at: r.at + 2000 }))),
      )
      await expectExact(b2, dir, [...someTimes(rnd), ...someTimes(rnd).map((t) => t + 2000)])
      // The writer cut the time index's stale entries before writing; stale sparse-index entries
      // are reported (as before), and repair clears them.
      const damage = checkPartition(dir, 0, 't').damage
      expect(damage.every((d) => d.kind === 'index' && d.file.endsWith('.idx'))).toBe(true)
      await repairPartition(dir, 0, 't')
      expect(checkPartition(dir, 0, 't').damage).toEqual([])
      await expectExact(
        b2,
        dir,
        someTimes(rnd).map((t) => t + 2000),
      )
    })
  }

  it('an entry left for a frame sent again with other timestamps (same offsets, positions and values) is not believed', async () => {
    const { b, root, dir } = await backend()
    const rnd = prng(21)
    const log = randomFrames(60, rnd)
    await append(b, log)
    await b.close()
    const stale = readTimeIndex(timeIndexPath(dir, 0))
    const seg = segmentPath(dir, 0)
    truncateSync(seg, (segmentFrames(seg)[30] as { pos: number }).pos)
    const b2 = new FileBackend(root, { pollMs: 50, segmentBytes: 4 * 1024 * 1024 })
    await b2.init()
    cleanup.push(() => b2.close())
    await append(
      b2,
      log.slice(30).map((f) => f.map((r) => ({ ...r, at: r.at + 2000 }))),
    )
    // As if the writer's cut had failed: the old entries are back, CRC-valid, at frames of their
    // offsets; only the frame's identity (its header CRC changed with the timestamps) tells.
    writeFileSync(timeIndexPath(dir, 0), stale)
    await expectExact(b2, dir, [...someTimes(rnd), ...someTimes(rnd).map((t) => t + 2000)])
    expect(
      checkPartition(dir, 0, 't').damage.some((d) => d.file.endsWith('.tix') && /those bytes/.test(d.reason)),
    ).toBe(true)
  })

  it('a seek landing on a frame whose body fails its CRC reports the damage, as reads do', async () => {
    const { b, dir } = await backend()
    await append(
      b,
      Array.from({ length: 40 }, (_, i) => [{ size: 30_000, at: T0 + i * 10 }]),
    )
    const seg = segmentPath(dir, 0)
    const f = segmentFrames(seg)[25] as { pos: number; h: { length: number } }
    const bytes = readFileSync(seg)
    bytes[f.pos + f.h.length - 100] = (bytes[f.pos + f.h.length - 100] as number) ^ 0x40 // inside a value
    writeFileSync(seg, bytes)
    await expect(b.offsetForTime('t', 0, T0 + 245)).rejects.toBeInstanceOf(TopicCorruptError)
    await expect(referenceOffsetForTime(b, dir, 't', T0 + 245)).rejects.toBeInstanceOf(TopicCorruptError)
    expect(await b.offsetForTime('t', 0, T0 + 235)).toBe(24) // frames before it are passed by their headers
  })

  it('a segment written before the time index gets none from a later writer; the next segment does', async () => {
    const { b, root, dir } = await backend()
    const rnd = prng(3)
    await randomLog(b, 20, rnd)
    await b.close()
    expect(listSegmentsSync(dir, 't')).toEqual([0])
    rmSync(timeIndexPath(dir, 0)) // as an older version left it
    const b2 = new FileBackend(root, { pollMs: 50, segmentBytes: 4 * 1024 * 1024 })
    await b2.init()
    cleanup.push(() => b2.close())
    await randomLog(b2, 200, rnd)
    const bases = listSegmentsSync(dir, 't')
    expect(bases.length).toBeGreaterThan(1)
    expect(existsSync(timeIndexPath(dir, 0))).toBe(false)
    expect(timeEntries(readTimeIndex(timeIndexPath(dir, bases[1] as number)))).toBeGreaterThan(0)
    expect(checkPartition(dir, 0, 't').damage).toEqual([])
    await expectExact(b2, dir, someTimes(rnd))
  })

  it('a trim deletes the time index with its segment (retention deletes segments the same way)', async () => {
    const { b, dir } = await backend(256 * 1024)
    await randomLog(b, 120, prng(4))
    const bases = listSegmentsSync(dir, 't')
    expect(bases.length).toBeGreaterThan(3)
    expect(existsSync(timeIndexPath(dir, bases[1] as number))).toBe(true)
    await b.trimBefore('t', 0, bases[2] as number)
    const left = readdirSync(dir).filter((n) => n.endsWith('.tix'))
    expect(left.every((n) => Number(n.slice(0, 20)) >= (bases[2] as number))).toBe(true)
    expect(left.length).toBeGreaterThan(0)
    expect(
      readdirSync(dir).filter(
        (n) => /^\d{20}\.(seg|idx|tix)$/.test(n) && Number(n.slice(0, 20)) < (bases[2] as number),
      ),
    ).toEqual([])
  })

  it('a time seek starts where the partition span starts: no trim mark, one inside, one past the end', async () => {
    const { b, dir } = await backend(256 * 1024)
    await randomLog(b, 40, prng(8))
    const same = () => expect(partitionStartSync(dir, 't', readdirSync(dir))).toBe(partitionSpanSync(dir, 't').start)
    same()
    await b.trimBefore('t', 0, 30)
    same()
    writeFileSync(startFile(dir), String(1_000_000)) // a mark past the end (check calls it damage): the end
    same()
    expect(partitionSpanSync(dir, 't').start).toBe(partitionSpanSync(dir, 't').end)
  })
})
