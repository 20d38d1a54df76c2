// Windows closed on idle partitions (`windowed(proc, { idleMs: 30 })`, README "Windows", decision
// 208) under kill -9, on the file backend and on Redis (tumbling and session windows), and on a
// Redis Cluster (tumbling). The test process writes clicks in bursts of
// 200 (users u0..u39, topic 'clicks' of 4 partitions), a burst's event times 2 ms apart and 5 s of
// event time after the last burst's; once the processors caught up with a burst, 200–400 ms of
// wall-clock silence before the next: in each
// silence every partition is idle and its last windows (200 ms tumbling windows, or 150 ms
// sessions) are closed by timer turns, not by a message. Processor children (window-child.ts, the
// idle kinds) kill themselves with SIGKILL right after one in 60 of their turns' store calls
// returns (after a decision, after results, after the windows left the state), and every 1–3 s
// the test kills one (part of the time two run: rebalances; a child that crashed is started
// again). Specified: every click is counted
// once, in one window, or sent to 'late' once; the results in 'counts' are exactly the windows of
// the clicks not late (each once, with its count; none missing, none twice); the turns' crash
// points were hit.
import { describe, expect, it } from 'vitest'
import type { Twain } from '../../src/index.js'
import { clusterTarget, fileTarget, redisTarget } from '../helpers/chaos-targets.js'
import { chaosFixture, ChildPool, MAX_ROUNDS, running } from '../helpers/child-pool.js'
import { exited } from '../helpers/spawn.js'
import { sleep, until } from '../helpers/wait.js'
import { sessionCounts } from '../helpers/window-models.js'

const PARTITIONS = 4
const USERS = 40
const BURST = 200
const BASE = Date.UTC(2026, 0, 1)
/** Event time from one burst's first click to the next's. */
const BURST_GAP = 5000
const SIZE = 200
const GAP = 150
const MIN_BURSTS = 20
/** Kills by the test (of any running child) and crashes at turns, at least each. */
const MIN_KILLS = 3

const { children, cleanups } = chaosFixture()

interface Click {
  id: number
  user: string
  t: number
}

/** `user start` → `[end, count]`, the windows of `clicks`. */
type Windows = Map<string, [number, number]>

function tumblingModel(clicks: readonly Click[]): Windows {
  const out: Windows = new Map()
  for (const c of clicks) {
    const start = Math.floor(c.t / SIZE) * SIZE
    const k = `${c.user} ${start}`
    out.set(k, [start + SIZE, (out.get(k)?.[1] ?? 0) + 1])
  }
  return out
}

function sessionModel(clicks: readonly Click[]): Windows {
  const byUser = new Map<string, number[]>()
  for (const c of clicks) byUser.set(c.user, [...(byUser.get(c.user) ?? []), c.t])
  return sessionCounts(byUser, GAP)
}

const kinds = [
  { kind: 'tumbling-idle', model: tumblingModel },
  { kind: 'session-idle', model: sessionModel },
]

const cases: Array<{
  name: string
  setup: () => Promise<{ target: string; options: Record<string, unknown>; twain: Twain }>
}> = [
  { name: 'file', setup: () => fileTarget(cleanups, 'twainmq-window-idle-') },
  { name: 'Redis', setup: () => redisTarget(cleanups) },
]

const runs = [
  ...cases.flatMap((c) => kinds.map((k) => [`${c.name}, ${k.kind}`, { ...c, ...k }] as const)),
  // Timer turns are the same for every window kind: one on the Cluster.
  [
    'Redis Cluster, tumbling-idle',
    { name: 'Redis Cluster', setup: () => clusterTarget(cleanups), ...(kinds[0] as (typeof kinds)[number]) },
  ] as const,
]

async function readResults(twain: Twain): Promise<Map<string, Array<[number, number]>>> {
  const got = new Map<string, Array<[number, number]>>()
  for await (const m of twain.history<{ start: number; end: number; value: number }, string>('counts')) {
    const k = `${m.key} ${m.value.start}`
    got.set(k, [...(got.get(k) ?? []), [m.value.end, m.value.value]])
  }
  return got
}

describe.each(runs)('%s: windows closed on idle partitions under kill -9', (_name, c) => {
  it('counts every click once, in one window or as late, and stores each window once', async () => {
    const { target, options, twain } = await c.setup()
    await twain.createTopic('clicks', { partitions: PARTITIONS, keyType: 'string' })
    await twain.createTopic('counts', { partitions: 2, keyType: 'string' })
    await twain.createTopic('late', { partitions: 1, keyType: 'string' })
    const pool = new ChildPool('window-child.ts', [target, JSON.stringify(options), c.kind], children)
    const crashes = (): number => pool.linesStarting('# crash').length

    const clicks: Click[] = []
    const ends = new Map<number, number>()
    const producer = twain.producer<string, string>('clicks')
    let producing = true
    const caughtUp = async (): Promise<boolean> => {
      const d = await twain.describeGroup('win')
      return d.topics.length === PARTITIONS && d.topics.every((t) => t.committed === (ends.get(t.partition) ?? 0))
    }
    const produced = (async () => {
      for (
        let b = 0;
        b < MIN_BURSTS || ((pool.kills < MIN_KILLS || crashes() < MIN_KILLS) && b < 8 * MIN_BURSTS);
        b++
      ) {
        const items = Array.from({ length: BURST }, (_, i) => {
          const id = b * BURST + i
          const click = { id, user: `u${id % USERS}`, t: BASE + b * BURST_GAP + i * 2 }
          clicks.push(click)
          return { key: click.user, value: String(id), timestamp: click.t }
        })
        for (const m of await producer.sendBatch(items))
          ends.set(m.partition, Math.max(ends.get(m.partition) ?? 0, m.offset + 1))
        // The processors caught up with the burst (a loaded machine's lag would leave no partition
        // idle, and no turn to crash at), then the silence that makes the partitions idle.
        await until(caughtUp, 120_000, 'the processors to catch up with a burst')
        await sleep(200 + Math.random() * 200) // the silence itself, not a synchronisation
      }
    })().finally(() => (producing = false))

    // The storm of the other chaos tests, with children that crashed at a turn started again: each
    // round waits 1–3 s, then for a child that has started (one may have crashed meanwhile), and
    // kills it (one that works if there is one, else one starting or restoring).
    const started = (): boolean =>
      pool.all.some((p) => running(p) && p.out.lines.some((l) => l.startsWith('# started')))
    pool.topUp(1)
    for (let round = 0; producing && round < MAX_ROUNDS; round++) {
      await sleep(1000 + Math.random() * 2000)
      await until(
        () => {
          pool.topUp(round % 4 >= 2 ? 2 : 1)
          return !producing || started()
        },
        120_000,
        'a child to start',
      )
      if (!producing) break
      await pool.killOne(false)
      pool.topUp(1)
    }
    await produced

    // One last processor, left alone until every click is processed and every window is stored. It
    // does not crash at turns (`calm`): told to close at the end, it must close, not crash on the way.
    await pool.killAll()
    const last = new ChildPool('window-child.ts', [target, JSON.stringify(options), c.kind, 'calm'], children).start()
    let seen = ''
    await until(
      async () => {
        const d = await twain.describeGroup('win')
        seen = d.topics.map((t) => `${t.partition}: ${t.committed}/${ends.get(t.partition) ?? 0}`).join(', ')
        return caughtUp()
      },
      120_000,
      'every click to be processed',
    ).catch((e: Error) => {
      throw new Error(
        `${e.message}; group ${seen}; last: ${last.out.lines.slice(-5).join(' | ')} ${last.out.stderr().slice(-1000)}`,
      )
    })
    const lateSeen = new Map<number, number>()
    for await (const m of twain.history<string>('late'))
      lateSeen.set(Number(m.value), (lateSeen.get(Number(m.value)) ?? 0) + 1)
    const want = c.model(clicks.filter((k) => !lateSeen.has(k.id)))
    let got = new Map<string, Array<[number, number]>>()
    await until(
      async () => {
        got = await readResults(twain)
        return [...want.keys()].every((k) => got.has(k))
      },
      120_000,
      'the idle partitions to close their last windows',
    )
    await until(() => last.out.lines.some((l) => l.startsWith('# started')), 60_000, 'the last child to start')
    last.child.kill('SIGTERM')
    const code = await exited(last.child)
    got = await readResults(twain)

    const missing = [...want.keys()].filter((k) => !got.has(k))
    const doubled = [...got].filter(([, v]) => v.length > 1).map(([k]) => k)
    const wrong = [...got]
      .filter(([k, v]) => String(v[0]) !== String(want.get(k)))
      .map(([k, v]) => `${k}: ${v[0]} (model ${want.get(k)})`)
    const lateTwice = [...lateSeen].filter(([, n]) => n > 1).length
    const errors = pool.linesStarting('# error')
    const info =
      `${c.name}, ${c.kind}: ${clicks.length} clicks, ${want.size} windows, ${lateSeen.size} late; ${pool.kills} SIGKILLs (${pool.workingKills} of working processors), ${crashes()} crashes at turns, ${pool.all.length} processors; ` +
      `${errors.length} error lines${errors[0] ? ` (e.g. ${errors[0]})` : ''}; missing ${missing.length} ${missing.slice(0, 3).join(', ')}; ` +
      `doubled ${doubled.length} ${doubled.slice(0, 3).join(', ')}; wrong ${wrong.length} ${wrong.slice(0, 3).join('; ')}; late twice ${lateTwice}`
    expect(code, info).toBe(0)
    expect(pool.kills, info).toBeGreaterThanOrEqual(MIN_KILLS)
    expect(crashes(), info).toBeGreaterThanOrEqual(MIN_KILLS)
    expect({ missing: missing.length, doubled: doubled.length, wrong: wrong.length, lateTwice }, info).toEqual({
      missing: 0,
      doubled: 0,
      wrong: 0,
      lateTwice: 0,
    })
  }, 400_000)
})
