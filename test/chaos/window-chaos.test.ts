// Event-time windows under kill -9 (`windowed(proc, { window: tumbling(10_000) | session(150),
// latenessMs: 1000 | 2000 })`, README "Windows"), on the file backend, on Redis and on a Redis Cluster. The test process writes N clicks (ids
// 0..N-1, users u0..u19) to topic 'clicks' (4 partitions) at a steady pace, each with an event time
// (its timestamp) 10 ms after the last give or take 1 s, and 1 click in 100 15 s late; then one
// click per partition far in the future, which closes every window. Processor children
// (window-child.ts) count each user's clicks per 10-second window. Every 1–3 s a processor is
// killed with SIGKILL and replaced; part of the time two run at once (rebalances). Specified: the
// results in 'counts' are exactly those of a model that runs the windows over each partition's
// clicks in log order (each window once, with its count; none missing, none twice, none wrong),
// and 'late' holds exactly the model's late clicks, once each; the tumbling windows' early results
// (`earlyEvery: 3`) are each multiple of 3 up to a window's count, once each. A user's clicks are 200 ms apart
// give or take 1 s, so 150 ms sessions start, grow and join one another all the time.
import { describe, expect, it } from 'vitest'
import type { Twain } from '../../src/index.js'
import { clusterTarget, fileTarget, redisTarget } from '../helpers/chaos-targets.js'
import { chaosFixture, ChildPool, drainWithOne, MIN_WORKING_KILLS, pace, stormWhile } from '../helpers/child-pool.js'
import { sessionCounts } from '../helpers/window-models.js'

const PARTITIONS = 4
const USERS = 20
const BATCH = 50
const SIZE = 10_000
/** Lateness of the tumbling windows, and of the sessions (a session click behind the watermark is late). */
const LATENESS = 1000
const SESSION_LATENESS = 2000
const GAP = 150
/** The tumbling windows' early results: after every this many clicks of a window (`earlyEvery`). */
const EARLY_EVERY = 3
const BASE = Date.UTC(2026, 0, 1)
/** The event time of the clicks that close every window. */
const FAR = BASE + 10 * 365 * 86_400_000

const { children, cleanups } = chaosFixture()

/** Click `id`'s event time: 10 ms apart, ±1 s of disorder, one in 100 15 s late. */
function eventTime(id: number): number {
  const jitter = ((id * 7919) % 2001) - 1000
  return BASE + id * 10 + jitter - (id % 100 === 50 ? 15_000 : 0)
}

interface Click {
  id: number
  user: string
  t: number
  partition: number
  offset: number
}

/** The watermark each of a partition's clicks (in log order) meets: the largest event time before it, less the lateness. */
function watermarks(mine: readonly Click[], lateness: number): number[] {
  let wm = -Infinity
  return mine.map((c) => {
    const at = wm
    wm = Math.max(wm, c.t - lateness)
    return at
  })
}

/** A partition's clicks in log order. */
const partitionClicks = (clicks: readonly Click[], p: number): Click[] =>
  clicks.filter((c) => c.partition === p).sort((a, b) => a.offset - b.offset)

interface Model {
  /** `user start` → `[end, count]`. */
  results: Map<string, [number, number]>
  late: Set<number>
}

/** Tumbling windows over each partition's clicks in log order: a click goes in its window unless the watermark it met passed the window's end. */
function tumblingModel(clicks: readonly Click[]): Model {
  const results = new Map<string, [number, number]>()
  const late = new Set<number>()
  for (let p = 0; p < PARTITIONS; p++) {
    const mine = partitionClicks(clicks, p)
    const wms = watermarks(mine, LATENESS)
    for (const [i, c] of mine.entries()) {
      if (c.id < 0) continue // a far click: its window never closes
      const start = Math.floor(c.t / SIZE) * SIZE
      if (start + SIZE <= (wms[i] as number)) late.add(c.id)
      else {
        const k = `${c.user} ${start}`
        results.set(k, [start + SIZE, (results.get(k)?.[1] ?? 0) + 1])
      }
    }
  }
  return { results, late }
}

/** Sessions: per user, the clicks in time (at or past the watermark they met), split where consecutive event times are GAP or more apart. */
function sessionModel(clicks: readonly Click[]): Model {
  const late = new Set<number>()
  const byUser = new Map<string, number[]>()
  for (let p = 0; p < PARTITIONS; p++) {
    const mine = partitionClicks(clicks, p)
    const wms = watermarks(mine, SESSION_LATENESS)
    for (const [i, c] of mine.entries()) {
      if (c.id < 0) continue // a far click: its session never closes
      if (c.t < (wms[i] as number)) late.add(c.id)
      else byUser.set(c.user, [...(byUser.get(c.user) ?? []), c.t])
    }
  }
  return { results: sessionCounts(byUser, GAP), late }
}

const kinds = [
  { kind: 'tumbling', model: tumblingModel },
  { kind: 'session', model: sessionModel },
]

interface Case {
  name: string
  inputs: number
  rate: number
  setup: () => Promise<{ target: string; options: Record<string, unknown>; twain: Twain }>
}

const cases: Case[] = [
  { name: 'file', inputs: 6000, rate: 600, setup: () => fileTarget(cleanups, 'twainmq-window-chaos-') },
  { name: 'Redis', inputs: 4000, rate: 400, setup: () => redisTarget(cleanups) },
  { name: 'Redis Cluster', inputs: 3000, rate: 300, setup: () => clusterTarget(cleanups) },
]

const runs = cases.flatMap((c) => kinds.map((k) => [`${c.name}, ${k.kind}`, { ...c, ...k }] as const))

describe.each(runs)('%s: event-time windows under a SIGKILL storm', (_name, c) => {
  const inputs = c.inputs
  it(`emits each window of at least ${inputs} clicks once with the model's count, and each late click once`, async () => {
    const { target, options, twain } = await c.setup()
    await twain.createTopic('clicks', { partitions: PARTITIONS, keyType: 'string' })
    await twain.createTopic('counts', { partitions: 2, keyType: 'string' })
    await twain.createTopic('late', { partitions: 1, keyType: 'string' })
    const pool = new ChildPool('window-child.ts', [target, JSON.stringify(options), c.kind], children)

    const clicks: Click[] = []
    const producer = twain.producer<string, string>('clicks')
    const produced = (async () => {
      const t0 = performance.now()
      // At least `inputs`, and on until the storm has killed enough working processors (a loaded
      // machine starts them slowly: a storm over fewer inputs could end short of kills).
      for (let from = 0; from < inputs || (pool.workingKills < MIN_WORKING_KILLS && from < 4 * inputs); from += BATCH) {
        const ids = Array.from({ length: BATCH }, (_, i) => from + i)
        const items = ids.map((id) => ({
          key: `u${id % USERS}`,
          value: String(id),
          timestamp: eventTime(id),
        }))
        const r = await producer.sendBatch(items)
        r.forEach((m, i) => {
          const id = ids[i] as number
          clicks.push({ id, user: `u${id % USERS}`, t: eventTime(id), partition: m.partition, offset: m.offset })
        })
        await pace(t0, from + BATCH, c.rate)
      }
      // One click per partition far in the future: every window of the partition closes.
      const ends = await producer.sendBatch(
        Array.from({ length: PARTITIONS }, (_, p) => ({ key: `end-${p}`, value: 'end', partition: p, timestamp: FAR })),
      )
      ends.forEach((m, p) =>
        clicks.push({ id: -1 - p, user: `end-${p}`, t: FAR, partition: m.partition, offset: m.offset }),
      )
    })()
    await stormWhile(pool, produced) // a failed write fails the test here
    const ends = new Map<number, number>()
    for (const k of clicks) ends.set(k.partition, Math.max(ends.get(k.partition) ?? 0, k.offset + 1))
    expect(await drainWithOne(pool, twain, 'win', ends, PARTITIONS)).toBe(0)

    const want = c.model(clicks)
    const got = new Map<string, Array<[number, number]>>()
    /** Early results (tumbling: every EARLY_EVERY clicks of a window): `user start count` → how often stored. */
    const early = new Map<string, number>()
    for await (const m of twain.history<{ start: number; end: number; value: number; early?: true }, string>(
      'counts',
    )) {
      const k = `${m.key} ${m.value.start}`
      if (m.value.early) early.set(`${k} ${m.value.value}`, (early.get(`${k} ${m.value.value}`) ?? 0) + 1)
      else got.set(k, [...(got.get(k) ?? []), [m.value.end, m.value.value]])
    }
    // A window's early counts: every multiple of EARLY_EVERY up to its count, each once.
    const wantEarly = new Set<string>()
    if (c.kind === 'tumbling')
      for (const [k, [, n]] of want.results)
        for (let e = EARLY_EVERY; e <= n; e += EARLY_EVERY) wantEarly.add(`${k} ${e}`)
    const earlyWrong =
      [...wantEarly].filter((k) => early.get(k) !== 1).length +
      [...early.keys()].filter((k) => !wantEarly.has(k)).length
    const lateSeen = new Map<number, number>()
    for await (const m of twain.history<string>('late'))
      lateSeen.set(Number(m.value), (lateSeen.get(Number(m.value)) ?? 0) + 1)
    const missing = [...want.results.keys()].filter((k) => !got.has(k))
    const doubled = [...got].filter(([, v]) => v.length > 1).map(([k]) => k)
    const wrong = [...got]
      .filter(([k, v]) => String(v[0]) !== String(want.results.get(k)))
      .map(([k, v]) => `${k}: ${v[0]} (model ${want.results.get(k)})`)
    const lateWrong =
      [...want.late].filter((id) => lateSeen.get(id) !== 1).length +
      [...lateSeen.keys()].filter((id) => !want.late.has(id)).length
    const errors = pool.linesStarting('# error')
    const info =
      `${c.name}, ${c.kind}: ${clicks.length} clicks, ${want.results.size} windows, ${want.late.size} late; ${pool.kills} SIGKILLs (${pool.workingKills} of working processors), ${pool.all.length} processors; ` +
      `${errors.length} error lines${errors[0] ? ` (e.g. ${errors[0]})` : ''}; missing ${missing.length} ${missing.slice(0, 3).join(', ')}; ` +
      `doubled ${doubled.length} ${doubled.slice(0, 3).join(', ')}; wrong ${wrong.length} ${wrong.slice(0, 3).join('; ')}; late wrong ${lateWrong}; ` +
      `early results ${early.size} (model ${wantEarly.size}), wrong ${earlyWrong}`
    expect(pool.workingKills, info).toBeGreaterThanOrEqual(MIN_WORKING_KILLS)
    expect(want.late.size, info).toBeGreaterThan(0)
    expect(
      { missing: missing.length, doubled: doubled.length, wrong: wrong.length, lateWrong, earlyWrong },
      info,
    ).toEqual({
      missing: 0,
      doubled: 0,
      wrong: 0,
      lateWrong: 0,
      earlyWrong: 0,
    })
  }, 300_000)
})
