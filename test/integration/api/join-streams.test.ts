// Windowed stream–stream joins (`joinStreams`, README "Stream–stream joins") through the public
// API, on a directory and on Redis: each left record pairs with each right record of its key
// within `withinMs`, whichever comes first, once; a record below its side's watermark is late
// (`onLate`, `lateTo`) and pairs with nothing; the join's records expire from its state once both
// sides' watermarks pass them; a second run of the group pairs nothing again; topics with other
// partition counts or key types are refused with both named; bad options are refused by name.
import { describe, expect, it } from 'vitest'
import { InvalidArgumentError, joinStreams, type JoinOptions, type JoinResult } from '../../../src/index.js'
import { backends } from '../../conformance/backends.js'
import { until } from '../../helpers/wait.js'
import { twain, useGroupStore } from '../groups/groups-fixtures.js'

const kinds = backends().filter((k) => k.name === 'file' || k.name === 'redis')
const T0 = Date.UTC(2026, 0, 1)

type Pair = JoinResult<string, string>

describe.each(kinds)('joinStreams on $name', (kind) => {
  useGroupStore(kind)

  async function setup(
    left: Array<{ key: string; at: number }>,
    right: Array<{ key: string; at: number }>,
    partitions = 1,
  ): Promise<void> {
    await twain.createTopic('orders', { partitions, keyType: 'string' })
    await twain.createTopic('payments', { partitions, keyType: 'string' })
    await twain.createTopic('paid', { partitions: 1, keyType: 'string' })
    await twain.createTopic('late', { partitions: 1, keyType: 'string' })
    const send = (topic: string, events: Array<{ key: string; at: number }>) =>
      twain
        .producer<string, string>(topic)
        .sendBatch(events.map((e) => ({ key: e.key, value: `${topic[0]}${e.at}`, timestamp: T0 + e.at })))
    // Interleaved: right first for some keys, left first for others.
    await send('payments', right)
    await send('orders', left)
  }

  /** Run the join until `n` pairs were yielded (and `alsoUntil` holds), then close it. */
  async function run(
    n: number,
    extra: Partial<JoinOptions<string, string, string, string>> = {},
    alsoUntil: (late: string[]) => boolean | Promise<boolean> = () => true,
  ) {
    const pairs: Pair[] = []
    const late: string[] = []
    const stream = joinStreams<string, string, string, string>(twain, {
      left: 'orders',
      right: 'payments',
      group: 'pay',
      withinMs: 5000,
      to: 'paid',
      lateTo: 'late',
      onLate: (m, side) => late.push(`${side} ${m.value}`),
      join: (o, p, { leftTime, rightTime }) => `${o}+${p} ${rightTime - leftTime}`,
      processors: { from: 'start' },
      ...extra,
    })
    const it = stream[Symbol.asyncIterator]()
    const reading = (async () => {
      for (;;) {
        const r = await it.next()
        if (r.done) return
        pairs.push(r.value)
      }
    })()
    await until(async () => pairs.length >= n && (await alsoUntil(late)), 20_000, `${n} pairs`).catch((e: Error) => {
      throw new Error(`${e.message}: got ${pairs.map((p) => p.value).join(', ')}; late ${late.join(', ')}`)
    })
    await it.return?.()
    await reading
    return { pairs, late }
  }

  it('pairs each left record with each right record of its key within withinMs, once, and stores what it yields', async () => {
    // Each side in event-time order (lateness 0: a record behind its side's latest would be late).
    await setup(
      [
        { key: 'a', at: 1000 },
        { key: 'b', at: 2000 },
        { key: 'c', at: 3000 },
        { key: 'a', at: 9000 },
      ],
      [
        { key: 'c', at: 3000 },
        { key: 'd', at: 3000 }, // no left record
        { key: 'a', at: 4000 }, // pairs with a@1000 (3 s) and a@9000 (5 s: the bound is inclusive)
        { key: 'b', at: 8000 }, // 6 s from b@2000: no pair
      ],
    )
    const joined = async () => (await twain.describeTopic('pay-join')).offsets[0]?.end === 8
    const { pairs, late } = await run(3, {}, joined)
    const shown = pairs.map((p) => `${p.key}: ${p.value}`).sort()
    expect(shown).toEqual(['a: o1000+p4000 3000', 'a: o9000+p4000 -5000', 'c: o3000+p3000 0'])
    expect(late).toEqual([])
    const stored: string[] = []
    for await (const m of twain.history<string, string>('paid')) {
      stored.push(`${m.key}: ${m.value}`)
      const p = pairs.find((x) => x.offset === m.offset) as Pair
      expect(m.timestamp).toBe(Math.max(p.leftTime, p.rightTime))
    }
    expect(stored.sort()).toEqual(shown)
    // The join topic holds each input once, with its side.
    const sides: string[] = []
    for await (const m of twain.history<string, string>('pay-join'))
      sides.push(`${m.headers['x-twain-join']} ${m.value}`)
    expect(sides.sort()).toEqual(
      ['o1000', 'o9000', 'o2000', 'o3000']
        .map((v) => `left ${v}`)
        .concat(['p4000', 'p8000', 'p3000', 'p3000'].map((v) => `right ${v}`))
        .sort(),
    )
  })

  it('a record below its own side’s watermark is late and pairs with nothing; expired records leave the state', async () => {
    // Lateness 1 s. Left: 10 s then 2 s (late: its side's watermark is 9 s). Right: 2 s (not late:
    // the right side has seen nothing). Then both sides at 60 s: the join's watermark moves to 59 s
    // and every record before it is removed from the state.
    await setup(
      [
        { key: 'a', at: 10_000 },
        { key: 'a', at: 2000 },
        { key: 'z', at: 60_000 },
      ],
      [
        { key: 'a', at: 2000 },
        { key: 'z', at: 60_000 },
      ],
    )
    const { pairs, late } = await run(1, { latenessMs: 1000 }, (l) => l.length > 0)
    expect(pairs.map((p) => `${p.key}: ${p.value}`)).toEqual(['z: o60000+p60000 0'])
    expect(late).toEqual(['left o2000'])
    const lateStored: string[] = []
    for await (const m of twain.history<string, string>('late'))
      lateStored.push(`${m.headers['x-twain-join']} ${m.value}`)
    expect(lateStored).toEqual(['left o2000'])
    // The state keeps z's two records only (a's were passed by the watermark) and the marks.
    // z's second record (the one that pairs) writes z's two records and removes a's, in one call.
    const state = async () => {
      const last = new Map<string, unknown>()
      for await (const m of twain.history<unknown, string>('pay-join-changelog')) last.set(m.key, m.value)
      return last
    }
    const both = (v: unknown) =>
      (v as { l?: unknown[]; r?: unknown[] } | undefined)?.l?.length === 1 && (v as { r: unknown[] }).r.length === 1
    await until(async () => both((await state()).get('j:z')), 10_000, "z's two records in the state")
    const kept = async () => [...(await state())].filter(([k, v]) => v !== null && k.startsWith('j:')).map(([k]) => k)
    expect(await kept()).toEqual(['j:z'])
  })

  it('a second run of the group finds no pair again; later records pair with the kept ones', async () => {
    await setup([{ key: 'a', at: 1000 }], [{ key: 'a', at: 2000 }])
    const first = await run(1)
    expect(first.pairs.map((p) => p.value)).toEqual(['o1000+p2000 1000'])
    await twain.producer<string, string>('payments').send('a', 'p3000', { timestamp: T0 + 3000 })
    const second = await run(1)
    expect(second.pairs.map((p) => p.value)).toEqual(['o1000+p3000 2000'])
    const stored: string[] = []
    for await (const m of twain.history<string, string>('paid')) stored.push(m.value)
    expect(stored).toEqual(['o1000+p2000 1000', 'o1000+p3000 2000'])
  })

  it('a reset of the joining group to the start with { state: "join" } pairs the same again from the join topic', async () => {
    await setup(
      [
        { key: 'a', at: 1000 },
        { key: 'c', at: 3000 },
        { key: 'a', at: 9000 },
      ],
      [
        { key: 'c', at: 3000 },
        { key: 'a', at: 4000 },
      ],
    )
    const joined = async () => (await twain.describeTopic('pay-join')).offsets[0]?.end === 5
    const shown = (pairs: Pair[]) => pairs.map((p) => `${p.key}: ${p.value}`).sort()
    const first = await run(3, {}, joined)
    expect(shown(first.pairs)).toEqual(['a: o1000+p4000 3000', 'a: o9000+p4000 -5000', 'c: o3000+p3000 0'])
    // The stream's return() closes its processors without waiting: the reset needs them gone.
    await until(async () => (await twain.describeGroup('pay')).members.length === 0, 10_000, 'the joiner to leave')
    // The copier's group is left as it is: the join topic holds every copy once.
    await twain.resetGroup('pay', 'pay-join', 'start', { state: 'join' })
    const again = await run(3)
    expect(shown(again.pairs)).toEqual(shown(first.pairs))
    expect((await twain.describeTopic('pay-join')).offsets[0]?.end).toBe(5)
  })

  it('inputs sent with idempotency ids are joined (their copies go without the id)', async () => {
    await setup([], [])
    await twain.producer<string, string>('orders').send('a', 'o1000', { id: 'order-1' })
    await twain.producer<string, string>('payments').send('a', 'p2000', { id: 'payment-1' })
    // Both sent now: their timestamps (the send time) are within a minute.
    const { pairs } = await run(1, { withinMs: 60_000 })
    expect(pairs.map((p) => p.value.split(' ')[0])).toEqual(['o1000+p2000'])
    for await (const m of twain.history<string, string>('pay-join')) expect(m.headers['x-twain-id']).toBeUndefined()
  })

  it('records passed by the watermark leave the state over several records when removing them all would pass a message’s bytes', async () => {
    // 1,200 keys with an old and a recent left record of 1 KiB each; a right record moves the
    // join's watermark past every old one: 1,200 keys to rewrite (over 1 MiB), which the next
    // records finish.
    const big = 'x'.repeat(1024)
    const keys = Array.from({ length: 1200 }, (_, i) => `k${String(i).padStart(4, '0')}`)
    await twain.createTopic('orders', { partitions: 1, keyType: 'string' })
    await twain.createTopic('payments', { partitions: 1, keyType: 'string' })
    await twain.createTopic('paid', { partitions: 1, keyType: 'string' })
    await twain.createTopic('late', { partitions: 1, keyType: 'string' })
    await twain
      .producer<string, string>('orders')
      .sendBatch([
        ...keys.map((key) => ({ key, value: big, timestamp: T0 + 1000 })),
        ...keys.map((key) => ({ key, value: big, timestamp: T0 + 20_000 })),
      ])
    // Every order joined (kept) before any payment comes.
    const committed = async (group: string) =>
      (await twain.describeGroup(group)).topics.reduce((n, t) => n + t.committed, 0)
    await run(0, {}, async () => (await committed('pay')) === 2 * keys.length)
    const payments = twain.producer<string, string>('payments')
    await payments.sendBatch(
      Array.from({ length: 5 }, (_, i) => ({ key: `z${i}`, value: 'p', timestamp: T0 + 10_000 + i })),
    )
    await payments.send('k0000', 'p20000', { timestamp: T0 + 20_000 })
    // The last payment pairs with k0000's recent order only (its old one is 19 s away).
    const { pairs } = await run(1, { join: (o, p, { leftTime }) => `${o.length}+${p} ${leftTime - T0}` })
    expect(pairs.map((p) => p.value)).toEqual(['1024+p20000 20000'])
    const state = new Map<string, { l: unknown[] } | null>()
    await until(
      async () => {
        for await (const m of twain.history<{ l: unknown[] } | null, string>('pay-join-changelog'))
          state.set(m.key, m.value)
        return keys.every((k) => state.get(`j:${k}`)?.l.length === 1)
      },
      20_000,
      "every key's old record to leave the state",
    )
  })

  it('refuses topics that are not co-partitioned, naming both; and results topics or a join topic unlike the inputs', async () => {
    await twain.createTopic('l4', { partitions: 4, keyType: 'string' })
    await twain.createTopic('r3', { partitions: 3, keyType: 'string' })
    await twain.createTopic('r4', { partitions: 4, keyType: 'u32' })
    await twain.createTopic('s4', { partitions: 4, keyType: 'string' })
    await twain.createTopic('out', { partitions: 1, keyType: 'string' })
    await twain.createTopic('out16', { partitions: 1 })
    const first = (right: string, more: Partial<JoinOptions<unknown, unknown, number, string>> = {}) =>
      joinStreams(twain, { left: 'l4', right, group: 'j', withinMs: 1, to: 'out', join: () => 1, ...more })
        [Symbol.asyncIterator]()
        .next()
    await expect(first('r3')).rejects.toThrow(/"l4" has 4 partitions, "r3" has 3/)
    await expect(first('r3')).rejects.toBeInstanceOf(InvalidArgumentError)
    await expect(first('r4')).rejects.toThrow(/"l4" has key type string, "r4" has u32/)
    await expect(first('s4', { to: 'out16' })).rejects.toThrow(/to "out16" has key type u16, the inputs string/)
    await expect(first('s4', { lateTo: 'missing' })).rejects.toThrow(/missing/)
    expect(await twain.topicExists('j-join')).toBe(false)
    await twain.createTopic('k-join', { partitions: 2, keyType: 'string' })
    await expect(first('s4', { group: 'k' })).rejects.toThrow(
      /join topic "k-join" has 2 partitions of key type string, the inputs 4 of string/,
    )
  })

  it('refuses bad options by name', () => {
    const base = { left: 'a', right: 'b', group: 'g', withinMs: 10, to: 'out', join: () => 1 }
    expect(() => joinStreams(twain, { ...base, withinMs: -1 })).toThrow(/withinMs must be a non-negative integer.*-1/)
    expect(() => joinStreams(twain, { ...base, right: 'a' })).toThrow(/left and right are both "a"/)
    expect(() => joinStreams(twain, { ...base, to: 'b' })).toThrow(/to and right are both "b"/)
    expect(() => joinStreams(twain, { ...base, lateTo: 'g-join' })).toThrow(/lateTo is "g-join", the join's own topic/)
    expect(() => joinStreams(twain, { ...base, left: 'no good' })).toThrow(/joinStreams\(\) left: Topic name "no good"/)
    expect(() => joinStreams(twain, { ...base, latenessMs: 1.5 })).toThrow(/latenessMs .* 1.5/)
    expect(() => joinStreams(twain, { ...base, join: undefined as never })).toThrow(
      /join must be a function, got undefined/,
    )
    expect(() => joinStreams(twain, { ...base, leftTime: 5 as never })).toThrow(
      /leftTime must be a function, got number/,
    )
    expect(() => joinStreams(twain, { ...base, group: '' })).toThrow(/group must be a name/)
    expect(() => joinStreams(twain, { ...base, group: '__x' })).toThrow(/group "__x" cannot name topics/)
    expect(() => joinStreams(twain, { ...base, processors: { maxDeliveries: 3 } as never })).toThrow(
      /processors.maxDeliveries is not an option a join passes on/,
    )
  })
})
