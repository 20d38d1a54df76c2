// `twain.resetGroup(group, topic, to, { state })` of a processor group that keeps state (README
// "State stores", "Replaying"), on a directory, on Redis and on a Redis Cluster: a reset to the
// start that names the state store clears it, so the replay gives the first run's results again
// (a windowed count, a running count per key; with the state kept, the restore starts after the
// last input its changelog names, and the replay does nothing); a clearing reset naming only some
// partitions is refused and changes nothing; a reset refused for a live member clears nothing; a
// store that does not exist, or a changelog of another group, is refused by name.
import { describe, expect, it } from 'vitest'
import {
  InvalidArgumentError,
  tumbling,
  windowed,
  type Processor,
  type ProcessorOptions,
  type WindowResult,
} from '../../../src/index.js'
import { backends } from '../../conformance/backends.js'
import { until } from '../../helpers/wait.js'
import { committed, twain, useGroupStore } from '../groups/groups-fixtures.js'

const kinds = backends().filter((k) => k.name === 'file' || k.name === 'redis' || k.name === 'cluster')
const T0 = Date.UTC(2026, 0, 1)
const PARTITIONS = 2

const opts = (group: string, state: string): ProcessorOptions => ({
  group,
  state,
  from: 'start',
  sessionTimeoutMs: 2000,
  heartbeatIntervalMs: 200,
})

/** `n` clicks of 3 users (each user's on its key's partition), 250 ms apart in event time, and a last click per partition far ahead that closes every window. */
async function clicks(n: number): Promise<void> {
  await twain.createTopic('in', { partitions: PARTITIONS, keyType: 'string' })
  await twain.producer<string, string>('in').sendBatch([
    ...Array.from({ length: n }, (_, i) => ({
      key: `u${i % 3}`,
      value: String(i),
      timestamp: T0 + i * 250,
    })),
    ...Array.from({ length: PARTITIONS }, (_, p) => ({ key: 'end', value: 'end', partition: p, timestamp: T0 + 1e9 })),
  ])
}

/** One run of a 1 s tumbling count per user until `n` windows came: each as `user start count`, sorted. */
async function windowRun(n: number, group = 'w'): Promise<string[]> {
  const p = twain.processor<string, string>('in', opts(group, 'win'))
  const got: WindowResult<number, string>[] = []
  const run = (async () => {
    for await (const r of windowed(p, { window: tumbling(1000), to: 'out', initial: () => 0, add: (c) => c + 1 })) {
      got.push(r)
      if (got.length === n) break
    }
  })()
  try {
    await until(() => got.length >= n, 20_000, `${n} windows (${got.length} so far)`)
    await run
  } finally {
    await p.close()
  }
  return got.map((r) => `${r.key} ${r.start} ${r.value}`).sort()
}

/** The windows of `n` clicks as a model: `user start count`, sorted. */
function windowModel(n: number): string[] {
  const counts = new Map<string, number>()
  for (let i = 0; i < n; i++) {
    const k = `u${i % 3} ${T0 + Math.floor((i * 250) / 1000) * 1000}`
    counts.set(k, (counts.get(k) ?? 0) + 1)
  }
  return [...counts].map(([k, c]) => `${k} ${c}`).sort()
}

/** Count each input per key in the state and send `value:count`; until `n` messages are acked. */
async function countRun(p: Processor<string, string>, n: number): Promise<string[]> {
  const sent: string[] = []
  let acked = 0
  for await (const m of p) {
    const c = (m.state.get<number>(m.key) ?? 0) + 1
    m.state.set(m.key, c)
    sent.push(`${m.partition}/${m.offset} ${m.key}=${c}`)
    void m.send('out', m.key, `${m.value}:${c}`)
    m.ack()
    if (++acked === n) break
  }
  return sent
}

describe.each(kinds)('resetGroup of a stateful processor group on $name', (kind) => {
  useGroupStore(kind)

  it("a reset to the start with { state } clears the group's state: the replay sends the same windows again", async () => {
    await clicks(60)
    await twain.createTopic('out', { partitions: 1, keyType: 'string' })
    const want = windowModel(60)
    const first = await windowRun(want.length)
    expect(first).toEqual(want)

    await twain.resetGroup('w', 'in', 'start', { state: 'win' })
    // With the state kept, the restore would start after the last input the changelog names, and
    // the replay would send nothing.
    const again = await windowRun(want.length)
    expect(again).toEqual(want)
    expect(await twain.listTopics()).toContain('w-win-changelog') // created again by the replay
    // The results topic holds every window, with its count of the first run: a replayed result the
    // store had stored for an input not yet committed then is that one (README "Replays store again").
    const stored = new Set<string>()
    for await (const m of twain.history<{ start: number; value: number }, string>('out'))
      stored.add(`${m.key} ${m.value.start} ${m.value.value}`)
    expect([...stored].sort()).toEqual(want)
  }, 60_000)

  it("a processor's running counts per key come out the same after a reset to the start with { state }", async () => {
    await twain.createTopic('in', { partitions: PARTITIONS, keyType: 'string' })
    await twain.createTopic('out', { partitions: 1, keyType: 'string' })
    await twain
      .producer<string, string>('in')
      .sendBatch(Array.from({ length: 40 }, (_, i) => ({ key: `k${i % 4}`, value: String(i), partition: i % 2 })))
    const p1 = twain.processor<string, string>('in', opts('c', 'n'))
    const first = await countRun(p1, 40)
    await p1.close()
    expect(await committed('c', 'in')).toEqual([20, 20])
    await twain.resetGroup('c', 'in', 'start', { state: 'n' })
    expect(await committed('c', 'in')).toEqual([0, 0])
    const p = twain.processor<string, string>('in', opts('c', 'n'))
    const again = await countRun(p, 40)
    await p.close()
    expect(again.sort()).toEqual(first.sort())
    expect(first.filter((s) => s.endsWith('=10'))).toHaveLength(4) // each key counted to 10 in each run
  }, 60_000)

  it('a clearing reset naming only some partitions is refused and changes nothing; without { state } it is allowed', async () => {
    await clicks(12)
    await twain.createTopic('out', { partitions: 1, keyType: 'string' })
    await windowRun(windowModel(12).length)
    const before = await committed('w', 'in')
    const err = await twain.resetGroup('w', 'in', { 0: 0 }, { state: 'win' }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(InvalidArgumentError)
    expect((err as Error).message).toContain('partition(s) 1 not given')
    expect(await committed('w', 'in')).toEqual(before)
    expect(await twain.listTopics()).toContain('w-win-changelog')
    // Without { state } the positions move and the state stays (a member goes on after what it covers).
    await twain.resetGroup('w', 'in', { 0: 0 })
    expect((await committed('w', 'in'))[0]).toBe(0)
    let records = 0
    for await (const _ of twain.history('w-win-changelog')) records++
    expect(records).toBeGreaterThan(0)
  }, 60_000)

  it('a reset refused for a live member clears nothing', async () => {
    await clicks(12)
    await twain.createTopic('out', { partitions: 1, keyType: 'string' })
    await windowRun(windowModel(12).length)
    // The product's default session (10 s): a loaded machine must not let the member lapse.
    const live = twain.processor<string, string>('in', { group: 'w', state: 'win', from: 'start' })
    const it = live[Symbol.asyncIterator]()
    const first = it.next() // joins the group
    try {
      await until(async () => (await twain.describeGroup('w')).members.length === 1, 10_000, 'the member to join')
      await expect(twain.resetGroup('w', 'in', 'start', { state: 'win' })).rejects.toThrow(/live member/)
      expect(await twain.listTopics()).toContain('w-win-changelog')
    } finally {
      await live.close()
      await first.catch(() => undefined)
    }
  }, 60_000)

  it("a store that does not exist, another group's changelog and bad options are refused by name", async () => {
    await clicks(12)
    await twain.createTopic('out', { partitions: 1, keyType: 'string' })
    await windowRun(windowModel(12).length, 'a-b') // its changelog a-b-win-changelog is by name store "b-win" of group "a"
    await expect(twain.resetGroup('a-b', 'in', 'start', { state: 'wn' })).rejects.toThrow(
      'Group "a-b" has no state store "wn": its changelog "a-b-wn-changelog" does not exist',
    )
    await expect(twain.resetGroup('a', 'in', 'start', { state: 'b-win' })).rejects.toThrow(
      /"a-b-win-changelog" is not the changelog of group "a" over topic "in": its records come from "a-b in@/,
    )
    await expect(twain.resetGroup('a-b', 'in', 'start', { state: '' })).rejects.toThrow(
      'resetGroup() option state must be a store name, got ""',
    )
    await expect(twain.resetGroup('a-b', 'in', 'start', { stat: 'win' } as object)).rejects.toThrow(
      'Unknown resetGroup() option "stat": use state',
    )
    expect(await twain.listTopics()).toContain('a-b-win-changelog')
    expect(await twain.listGroups()).not.toContain('a') // nothing was reset
  })
})
