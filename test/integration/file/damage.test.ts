import fs from 'node:fs'
import { afterEach, describe, expect, it } from 'vitest'
import { TopicCorruptError, open, type Message, type Twain } from '../../../src/index.js'
import {
  TOPIC,
  cli,
  cut,
  drain,
  essence,
  flip,
  frames,
  makeTopic,
  value,
  type Damaged,
  type Frame,
} from '../../helpers/damage.js'
import { until } from '../../helpers/spawn.js'

/*
 * "Never lose, hide or destroy an acknowledged record": damaged bytes (flipped or cut) in sealed and
 * active segments are reported as TopicCorruptError after every intact record before them, writers
 * never delete them, and `twainmq check`/`repair` find them, move them aside and keep every other
 * record at its offset.
 */

interface Case {
  name: string
  /** Segment (index into the segments; -1 is the active one) and frame (-1: the last records frame). */
  seg: number
  frame: number
  damage(file: string, f: Frame): void
  /** Offsets whose records the damage destroys, given the next segment's base. */
  lost(f: Frame, nextBase: number | undefined): number[]
}

const one = (f: Frame) => [f.base]
const toEnd = (f: Frame, next: number | undefined) =>
  Array.from({ length: (next as number) - f.base }, (_, i) => f.base + i)

const CASES: Case[] = [
  {
    name: 'a flipped magic byte in a sealed segment',
    seg: 1,
    frame: 5,
    damage: (file, f) => flip(file, f.pos),
    lost: one,
  },
  {
    name: 'a flipped length byte in the active segment',
    seg: -1,
    frame: 1,
    damage: (file, f) => flip(file, f.pos + 4, 0x01),
    lost: one,
  },
  {
    name: 'a flipped magic byte in the last frame of the active segment',
    seg: -1,
    frame: -1,
    damage: (file, f) => flip(file, f.pos + 1, 0x04),
    lost: one,
  },
  {
    name: 'a flipped value byte in a sealed segment',
    seg: 2,
    frame: 7,
    damage: (file, f) => flip(file, f.pos + f.len - 1, 0x20),
    lost: one,
  },
  {
    name: 'a flipped CRC byte in the last frame of the active segment',
    seg: -1,
    frame: -1,
    damage: (file, f) => flip(file, f.pos + 8, 0x80),
    lost: one,
  },
  {
    name: 'a sealed segment cut in the middle of a frame',
    seg: 1,
    frame: 5,
    damage: (file, f) => cut(file, f.pos + 10),
    lost: toEnd,
  },
  {
    name: 'a sealed segment cut at a frame boundary (its seal and later frames gone)',
    seg: 2,
    frame: 3,
    damage: (file, f) => cut(file, f.pos),
    lost: toEnd,
  },
]

let d: Damaged | undefined
let twain: Twain | undefined
afterEach(async () => {
  await twain?.close()
  twain = undefined
  if (d) fs.rmSync(d.root, { recursive: true, force: true })
  d = undefined
})

/** A fresh topic with `c` applied; returns the damaged frame and its segment. */
async function damaged(c: Case): Promise<{ file: string; f: Frame; lost: number[] }> {
  d = await makeTopic()
  expect(d.segs.length).toBeGreaterThanOrEqual(4)
  const i = c.seg < 0 ? d.segs.length + c.seg : c.seg
  const file = d.segs[i] as string
  const all = frames(file)
  const records = i === d.segs.length - 1 ? all : all.slice(0, -1) // without the seal
  expect(records.length, `segment ${file} has too few frames for the case`).toBeGreaterThanOrEqual(3)
  const f = records.at(c.frame) as Frame
  const nextBase = d.segs[i + 1] === undefined ? undefined : Number(d.segs[i + 1]!.slice(-24, -4))
  const lost = c.lost(f, nextBase)
  c.damage(file, f)
  return { file, f, lost }
}

function expectCorrupt(error: unknown, file: string, f: Frame): void {
  expect(error).toBeInstanceOf(TopicCorruptError)
  expect(error).toMatchObject({ code: 'ERR_TOPIC_CORRUPT', file, position: f.pos, offset: f.base })
}

describe('readers report damage after every intact record before it', () => {
  for (const c of CASES) {
    it(`history: ${c.name}`, async () => {
      const { file, f } = await damaged(c)
      twain = await open(d!.root)
      const r = await drain(twain.history(TOPIC))
      expect(r.msgs.map(essence)).toEqual(d!.truth.slice(0, f.base).map(essence))
      expectCorrupt(r.error, file, f)
    })

    it(`tail: ${c.name}`, async () => {
      const { file, f } = await damaged(c)
      twain = await open(d!.root, { pollMs: 50 })
      const r = await drain(twain.tail(TOPIC, { from: 'start' }))
      expect(r.timedOut).toBe(false)
      expect(r.msgs.map(essence)).toEqual(d!.truth.slice(0, f.base).map(essence))
      expectCorrupt(r.error, file, f)
    })
  }

  it('a reader seeking past a damaged frame (its header intact) reads every later record', async () => {
    const { f } = await damaged(CASES[2] as Case)
    twain = await open(d!.root)
    const r = await drain(twain.history(TOPIC, { from: f.base + 1 }))
    expect(r.error).toBeUndefined()
    expect(r.msgs.map(essence)).toEqual(d!.truth.slice(f.base + 1).map(essence))
  })

  it('a consumer group member emits the TopicCorruptError on its error event after the intact records', async () => {
    const { file, f } = await damaged(CASES[0] as Case)
    twain = await open(d!.root, { pollMs: 50 })
    const c = twain.consumer<string>(TOPIC, { group: 'g', sessionTimeoutMs: 2000, heartbeatIntervalMs: 200 })
    const errors: unknown[] = []
    c.on('error', (e) => errors.push(e))
    const got: Message[] = []
    const reading = (async () => {
      for await (const m of c) {
        got.push(m)
        m.ack()
      }
    })()
    await until(() => errors.length > 0 && got.length >= f.base, 10_000, 'the damage error')
    expectCorrupt(errors[0], file, f)
    expect(got.map(essence)).toEqual(d!.truth.slice(0, f.base).map(essence))
    await c.close()
    await reading
  })

  it('a torn write at the end of the active segment is a write in progress, not damage', async () => {
    d = await makeTopic()
    const file = d.segs.at(-1) as string
    const last = frames(file).at(-1) as Frame
    cut(file, last.pos + last.len - 3)
    twain = await open(d.root, { pollMs: 50 })
    const h = await drain(twain.history(TOPIC))
    expect(h.error).toBeUndefined()
    expect(h.msgs.map(essence)).toEqual(d.truth.slice(0, -1).map(essence))
    const t = await drain(twain.tail(TOPIC, { from: 'start' }), 1000)
    expect(t).toMatchObject({ timedOut: true, error: undefined })
    expect(t.msgs.length).toBe(d.truth.length - 1)
    const checked = await cli(['--url', d.root, 'check', TOPIC])
    expect(checked.code).toBe(0)
    expect(checked.stdout).toMatch(/torn write/)
  })
})

describe('bogus index entries', () => {
  for (const [name, bogus] of [
    ['pointing into the middle of a frame', (f: Frame) => f.pos + 7],
    ['pointing at the frame of a later offset', (_f: Frame, later: Frame) => later.pos],
  ] as const) {
    it(`${name}: readers seeking through them get exactly the true records; check reports them; repair rebuilds the index`, async () => {
      d = await makeTopic()
      const seg = d.segs[1] as string
      const fs5 = frames(seg)
      const idx = seg.replace(/\.seg$/, '.idx')
      const entries = fs.readFileSync(idx)
      entries.writeDoubleLE(bogus(fs5[0] as Frame, fs5[5] as Frame), 8) // the first entry names the segment's first offset
      fs.writeFileSync(idx, entries)
      twain = await open(d.root)
      const from = (fs5[0] as Frame).base + 2
      const r = await drain(twain.history(TOPIC, { from }))
      expect(r.error).toBeUndefined()
      expect(r.msgs.map(essence)).toEqual(d.truth.slice(from).map(essence))
      const checked = await cli(['--url', d.root, 'check', TOPIC])
      expect(checked.code).toBe(1)
      expect(checked.stdout).toContain(`damage: ${idx} bytes 0..15: entry 0`)
      expect((await cli(['--url', d.root, 'repair', TOPIC])).code).toBe(0)
      expect((await cli(['--url', d.root, 'check', TOPIC])).code).toBe(0)
      expect(fs.readdirSync(d.dir).some((n) => n.startsWith(`${idx.slice(-24)}.quarantine-`))).toBe(true)
    })
  }
})

describe('writers never destroy damaged bytes', () => {
  it('a send to a partition with damage in its active segment rejects with TopicCorruptError and changes no byte', async () => {
    const { file } = await damaged({
      name: '',
      seg: -1,
      frame: 1,
      damage: (file, f) => flip(file, f.pos + f.len - 2),
      lost: one,
    })
    const before = fs.readFileSync(file)
    twain = await open(d!.root)
    await expect(twain.producer<string>(TOPIC).send(1, 'after the damage')).rejects.toBeInstanceOf(TopicCorruptError)
    await expect(twain.producer<string>(TOPIC).send(1, 'and again')).rejects.toMatchObject({
      code: 'ERR_TOPIC_CORRUPT',
      file,
    })
    expect(fs.readFileSync(file).equals(before)).toBe(true)
  })
})

describe('twainmq check and repair', { timeout: 60_000 }, () => {
  for (const c of CASES) {
    it(`${c.name}: check reports it (exit 1); repair quarantines it, keeps every other record at its offset; check exits 0; writes continue`, async () => {
      const { file, f, lost } = await damaged(c)
      const checked = await cli(['--url', d!.root, 'check', TOPIC])
      expect(checked.code).toBe(1)
      expect(checked.stderr).toMatch(/^ERR_TOPIC_CORRUPT: /)
      expect(checked.stdout).toMatch(/^partition 0: \d+ segments, \d+ records, offsets 0\.\.\d+, DAMAGED$/m)
      expect(checked.stdout).toContain(
        `damage: ${file} ${fs.statSync(file).size > f.pos ? `bytes ${f.pos}..` : `at byte ${f.pos}`}`,
      )
      const bytesAfter = fs.statSync(file).size - f.pos

      const repaired = await cli(['--url', d!.root, 'repair', TOPIC])
      expect(repaired.code).toBe(0)
      expect(repaired.stdout).toContain(`rewrote ${file}`)
      const quarantined = fs.readdirSync(d!.dir).filter((n) => n.startsWith(`${file.slice(-24)}.quarantine-`))
      expect(quarantined.length).toBe(bytesAfter > 0 ? 1 : 0)
      const after = await cli(['--url', d!.root, 'check', TOPIC])
      expect(after.code).toBe(0)
      expect(after.stdout).toMatch(/, ok$/m)

      twain = await open(d!.root)
      const r = await drain(twain.history(TOPIC))
      expect(r.error).toBeUndefined()
      expect(r.msgs.map(essence)).toEqual(d!.truth.filter((m) => !lost.includes(m.offset)).map(essence))
      const sent = await twain.producer<string>(TOPIC).send(1, value(1000))
      // After the highest offset ever acknowledged: never the offset of a lost record (a gap is fine).
      expect(sent.offset).toBeGreaterThanOrEqual(d!.truth.length)
      expect(sent.offset).toBeLessThan(d!.truth.length + 10)
      expect((await drain(twain.history(TOPIC, { from: sent.offset }))).msgs.map((m) => m.value)).toEqual([value(1000)])
    })
  }

  it('on a Redis store both are usage errors (exit 2)', async () => {
    for (const cmd of ['check', 'repair']) {
      const r = await cli(['--url', 'redis://127.0.0.1:1', cmd, TOPIC])
      expect(r.code).toBe(2)
      expect(r.stderr).toMatch(/^ERR_USAGE: .*directory store/)
    }
  })

  it('a damaged trim mark is reported and rebuilt from the data', async () => {
    d = await makeTopic(30)
    fs.writeFileSync(`${d.dir}/start`, 'garbage')
    const checked = await cli(['--url', d.root, 'check', TOPIC])
    expect(checked.code).toBe(1)
    expect(checked.stdout).toContain(`damage: ${d.dir}/start`)
    expect((await cli(['--url', d.root, 'repair', TOPIC])).code).toBe(0)
    expect(fs.readFileSync(`${d.dir}/start`, 'utf8')).toBe('0')
    twain = await open(d.root)
    expect((await drain(twain.history(TOPIC))).msgs.length).toBe(30)
  })
})
