// A processor's keyed state under kill -9 (`twain.processor(topic, { state })`, README "State
// stores"), on the file backend, on Redis and on a Redis Cluster. The test process writes N inputs (ids 0..N-1, keys
// k0..k39) to topic 'in' (4 partitions) at a steady pace; processor children (state-child.ts) count
// each key's inputs in the state store and send `<id>:<count>` to 'out'. Every 1–3 s a processor is
// killed with SIGKILL and replaced; part of the time two run at once (rebalances). Once every input
// is written one processor runs until the group's lag is 0 and closes. Specified: every input has
// exactly one output, whose count is the input's rank among its key's inputs in log order (no
// increment lost or counted twice across kills, restores and rebalances); the changelog's latest
// value of each key is the key's number of inputs; the group committed every input.
import { describe, expect, it } from 'vitest'
import type { Twain } from '../../src/index.js'
import { chaosFixture, ChildPool, drainWithOne, MIN_WORKING_KILLS, pace, stormWhile } from '../helpers/child-pool.js'
import { clusterTarget, fileTarget, redisTarget } from '../helpers/chaos-targets.js'

const PARTITIONS = 4
const KEYS = 40
const BATCH = 50

const { children, cleanups } = chaosFixture()

interface Case {
  name: string
  inputs: number
  rate: number
  setup: () => Promise<{ target: string; options: Record<string, unknown>; twain: Twain }>
}

const cases: Case[] = [
  {
    name: 'file',
    inputs: 6000,
    rate: 600,
    setup: () => fileTarget(cleanups, 'twainmq-state-chaos-'),
  },
  {
    name: 'Redis',
    inputs: 4000,
    rate: 400,
    setup: () => redisTarget(cleanups),
  },
  {
    name: 'Redis Cluster',
    inputs: 3000,
    rate: 300,
    setup: () => clusterTarget(cleanups),
  },
]

describe.each(cases.map((c) => [c.name, c] as const))('%s: a state store under a SIGKILL storm', (_name, c) => {
  it(`counts each of at least ${c.inputs} inputs once in its key's state, and outputs each input's count once`, async () => {
    const { target, options, twain } = await c.setup()
    await twain.createTopic('in', { partitions: PARTITIONS, keyType: 'string' })
    await twain.createTopic('out', { partitions: 2, keyType: 'string' })

    const pool = new ChildPool('state-child.ts', [target, JSON.stringify(options)], children)

    // The inputs at a steady pace, with ids (a batch whose write failed is sent again, stored once).
    const at = new Map<number, { partition: number; offset: number }>()
    const producer = twain.producer<string, string>('in', { dedupWindowMs: 600_000 })
    const produced = (async () => {
      const t0 = performance.now()
      // At least c.inputs, and on until the storm has killed enough working processors (a loaded
      // machine starts them slowly: a storm over fewer inputs could end short of kills).
      for (
        let from = 0;
        from < c.inputs || (pool.workingKills < MIN_WORKING_KILLS && from < 4 * c.inputs);
        from += BATCH
      ) {
        const ids = Array.from({ length: BATCH }, (_, i) => from + i)
        const items = ids.map((id) => ({ key: `k${id % KEYS}`, value: String(id), id: `in-${id}` }))
        const r = await producer.sendBatch(items)
        r.forEach((m, i) => at.set(ids[i] as number, { partition: m.partition, offset: m.offset }))
        await pace(t0, from + BATCH, c.rate)
      }
    })()
    await stormWhile(pool, produced) // a failed write fails the test here
    const ends = new Map<number, number>()
    for (const a of at.values()) ends.set(a.partition, Math.max(ends.get(a.partition) ?? 0, a.offset + 1))
    expect(await drainWithOne(pool, twain, 'count', ends, PARTITIONS)).toBe(0)

    // The model: each key's inputs in log order (one key is in one partition) are counted 1, 2, …
    const expected = new Map<number, number>()
    const totals = new Map<string, number>()
    const byKey = new Map<string, number[]>()
    for (let id = 0; id < at.size; id++) {
      const k = `k${id % KEYS}`
      byKey.set(k, [...(byKey.get(k) ?? []), id])
    }
    for (const [k, ids] of byKey) {
      const order = ids.sort((a, b) => (at.get(a)?.offset ?? 0) - (at.get(b)?.offset ?? 0))
      order.forEach((id, i) => expected.set(id, i + 1))
      totals.set(k, ids.length)
    }
    const outputs = new Map<number, number[]>()
    for await (const m of twain.history<string>('out')) {
      const [id, count] = m.value.split(':').map(Number) as [number, number]
      outputs.set(id, [...(outputs.get(id) ?? []), count])
    }
    const missing: number[] = []
    const doubled: number[] = []
    const wrong: string[] = []
    for (let id = 0; id < at.size; id++) {
      const got = outputs.get(id) ?? []
      if (got.length === 0) missing.push(id)
      if (got.length > 1) doubled.push(id)
      if (got.some((n) => n !== expected.get(id))) wrong.push(`${id}: ${got.join(',')} (expected ${expected.get(id)})`)
    }
    const changelog = new Map<string, unknown>()
    for await (const m of twain.history('count-counts-changelog')) changelog.set(m.key as string, m.value)
    const errorLines = pool.linesStarting('# error')
    const info =
      `${c.name}: ${at.size} inputs, ${pool.kills} SIGKILLs (${pool.workingKills} of working processors), ${pool.all.length} processors; ` +
      `${errorLines.length} error lines${errorLines[0] ? ` (e.g. ${errorLines[0]})` : ''}; ` +
      `missing ${missing.length} ${missing.slice(0, 5).join(',')}; doubled ${doubled.length} ${doubled.slice(0, 5).join(',')}; ` +
      `wrong ${wrong.length} ${wrong.slice(0, 5).join('; ')}`
    expect(pool.workingKills, info).toBeGreaterThanOrEqual(MIN_WORKING_KILLS)
    expect({ missing: missing.length, doubled: doubled.length, wrong: wrong.length }, info).toEqual({
      missing: 0,
      doubled: 0,
      wrong: 0,
    })
    expect(changelog, info).toEqual(totals)
  }, 300_000)
})
