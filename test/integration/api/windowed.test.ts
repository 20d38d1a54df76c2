// Event-time windows (`windowed`, `tumbling`, `hopping`; README "Windows") through the public API,
// on a directory and on Redis: hopping windows hold a message in each window it falls in; an
// `eventTime` function replaces the timestamp; late messages go to `onLate` and `lateTo`; the
// stream's results say where they are stored and match the topic; `idleMs` closes an idle
// partition's last windows by the wall clock, once; `earlyEvery` sends early results marked as
// such; bad options are refused by name.
import { filter, from, lastValueFrom, take, toArray } from 'rxjs'
import { describe, expect, it } from 'vitest'
import { hopping, InvalidArgumentError, session, tumbling, windowed, type WindowResult } from '../../../src/index.js'
import { backends } from '../../conformance/backends.js'
import { until } from '../../helpers/wait.js'
import { twain, useGroupStore } from '../groups/groups-fixtures.js'

const kinds = backends().filter((k) => k.name === 'file' || k.name === 'redis')
const T0 = Date.UTC(2026, 0, 1)

describe.each(kinds)('windowed on $name', (kind) => {
  useGroupStore(kind)

  async function setup(events: Array<{ key: string; at: number; value?: string }>): Promise<void> {
    await twain.createTopic('in', { partitions: 1, keyType: 'string' })
    await twain.createTopic('out', { partitions: 1, keyType: 'string' })
    await twain.createTopic('late', { partitions: 1, keyType: 'string' })
    await twain
      .producer<string, string>('in')
      .sendBatch(events.map((e) => ({ key: e.key, value: e.value ?? String(e.at), timestamp: T0 + e.at })))
  }

  const proc = (group = 'w') => twain.processor<string, string>('in', { group, state: 'win', from: 'start' })

  it('hopping windows: each message in every window it falls in; results in the stream and the topic agree', async () => {
    // Windows of 10 s every 5 s; events at 1, 6, 12 s, then 30 s to close them all.
    await setup([
      { key: 'a', at: 1000 },
      { key: 'a', at: 6000 },
      { key: 'a', at: 12_000 },
      { key: 'a', at: 30_000 },
    ])
    const p = proc()
    const got = await lastValueFrom(
      from(
        windowed(p, {
          window: hopping(10_000, 5000),
          to: 'out',
          initial: () => [] as number[],
          add: (xs, m) => [...xs, Number(m.value) / 1000],
        }),
      ).pipe(take(4), toArray()),
    )
    await p.close()
    const shown = got.map((r: WindowResult<number[], string>) => [(r.start - T0) / 1000, (r.end - T0) / 1000, r.value])
    expect(shown).toEqual([
      [-5, 5, [1]],
      [0, 10, [1, 6]],
      [5, 15, [6, 12]],
      [10, 20, [12]],
    ])
    const stored: unknown[] = []
    for await (const m of twain.history<{ start: number; end: number; value: number[] }, string>('out'))
      stored.push({ key: m.key, offset: m.offset, value: m.value, timestamp: m.timestamp })
    expect(stored).toEqual(
      got.map((r) => ({
        key: r.key,
        offset: r.offset,
        value: { start: r.start, end: r.end, value: r.value },
        timestamp: r.end - 1,
      })),
    )
  })

  it('eventTime replaces the timestamp; late messages go to onLate and lateTo; lateness keeps a window open', async () => {
    // Event time from the value; lateness 2 s: 9 s keeps [0,10) open until the watermark passes 10 s.
    await setup([
      { key: 'a', at: 0, value: '1000' },
      { key: 'a', at: 0, value: '11000' }, // watermark 9 s: [0,10) still open
      { key: 'a', at: 0, value: '9500' }, // in time for [0,10)
      { key: 'a', at: 0, value: '13000' }, // watermark 11 s: [0,10) closes with 2
      { key: 'a', at: 0, value: '8000' }, // late
      { key: 'a', at: 0, value: '40000' }, // closes [10,20)
    ])
    const p = proc()
    const late: string[] = []
    const got = await lastValueFrom(
      from(
        windowed(p, {
          window: tumbling(10_000),
          latenessMs: 2000,
          eventTime: (m) => T0 + Number(m.value),
          to: 'out',
          lateTo: 'late',
          onLate: (m) => late.push(m.value),
          initial: () => 0,
          add: (n) => n + 1,
        }),
      ).pipe(take(2), toArray()),
    )
    await p.close()
    expect(got.map((r) => [(r.start - T0) / 1000, r.value])).toEqual([
      [0, 2],
      [10, 2],
    ])
    expect(late).toEqual(['8000'])
    const aside: string[] = []
    for await (const m of twain.history<string>('late')) aside.push(m.value)
    expect(aside).toEqual(['8000'])
  })

  it('a late message sent with an idempotency id goes to lateTo as well (without the id), and the windows go on', async () => {
    await twain.createTopic('in', { partitions: 1, keyType: 'string' })
    await twain.createTopic('out', { partitions: 1, keyType: 'string' })
    await twain.createTopic('late', { partitions: 1, keyType: 'string' })
    const producer = twain.producer<string, string>('in')
    await producer.send('a', 'first', { timestamp: T0 + 20_000 })
    await producer.send('a', 'late', { id: 'click-1' }) // timestamp: now, long before 20 s past 2026
    await producer.send('a', 'closes', { timestamp: T0 + 50_000 })
    const p = proc()
    // Late by its timestamp: a year's worth of windows behind the watermark.
    const got = await lastValueFrom(
      from(
        windowed(p, {
          window: tumbling(10_000),
          eventTime: (m) => (m.value === 'late' ? T0 - 365 * 86_400_000 : m.timestamp),
          to: 'out',
          lateTo: 'late',
          initial: () => 0,
          add: (n) => n + 1,
        }),
      ).pipe(take(1), toArray()),
    )
    expect(got.map((r) => [(r.start - T0) / 1000, r.value])).toEqual([[20, 1]])
    await until(async () => (await twain.length('late')) === 1, 10_000, 'the late message in lateTo')
    await p.close()
    for await (const m of twain.history<string>('late')) {
      expect(m.value).toBe('late')
      expect(m.headers['x-twain-id']).toBeUndefined()
    }
  })

  it('a watermark that closes more windows than a message may write state keys closes them all, in order, over the next messages', async () => {
    // 1,500 users with a click in [0,10); a click at 30 s closes their 1,500 windows (one state
    // key each, more than a message's 1000); later clicks close the rest.
    const users = Array.from({ length: 1500 }, (_, i) => `u${String(i).padStart(4, '0')}`)
    await setup([
      ...users.map((key) => ({ key, at: 1000 })),
      { key: 'z', at: 30_000 },
      { key: 'z', at: 30_001 },
      { key: 'z', at: 30_002 },
    ])
    const p = proc()
    const got = await lastValueFrom(
      from(windowed(p, { window: tumbling(10_000), to: 'out', initial: () => 0, add: (n) => n + 1 })).pipe(
        take(users.length),
        toArray(),
      ),
    )
    await p.close()
    expect(got.map((r) => [r.key, r.start - T0, r.value])).toEqual(users.map((u) => [u, 0, 1]))
    expect(got.map((r) => r.offset)).toEqual(users.map((_, i) => i))
  })

  it('session windows: events less than the gap apart are one session; an event between two joins them; late ones go to onLate', async () => {
    // Gap 5 s, lateness 5 s. a: 0, 3, 5 → one session [0, 5]; 20 → another. b: 10 and 18 are two
    // sessions until 14 (in time: the watermark is 13) joins them. b at 2 is behind the watermark: late.
    await setup([
      { key: 'a', at: 0 },
      { key: 'a', at: 3000 },
      { key: 'a', at: 5000 },
      { key: 'b', at: 10_000 },
      { key: 'b', at: 18_000 },
      { key: 'b', at: 14_000 },
      { key: 'b', at: 2000 },
      { key: 'a', at: 20_000 },
      { key: 'z', at: 60_000 },
    ])
    const p = proc()
    const late: string[] = []
    const got = await lastValueFrom(
      from(
        windowed(p, {
          window: session(5000),
          latenessMs: 5000,
          to: 'out',
          onLate: (m) => late.push(`${m.key}@${m.value}`),
          initial: () => [] as number[],
          add: (xs, m) => [...xs, Number(m.value) / 1000],
          merge: (x, y) => [...x, ...y],
        }),
      ).pipe(take(3), toArray()),
    )
    await p.close()
    // Closed in the order the watermark reached them (last event + gap): a [0,5] at 10, b at 23, a [20] at 25.
    expect(got.map((r) => [r.key, (r.start - T0) / 1000, (r.end - 1 - T0) / 1000, r.value])).toEqual([
      ['a', 0, 5, [0, 3, 5]],
      ['b', 10, 18, [10, 18, 14]],
      ['a', 20, 20, [20]],
    ])
    expect(late).toEqual(['b@2000'])
    const stored: unknown[] = []
    for await (const m of twain.history<{ start: number; end: number; value: number[] }, string>('out'))
      stored.push([m.key, m.value.start, m.value.end, m.timestamp])
    expect(stored).toEqual(got.map((r) => [r.key, r.start, r.end, r.end - 1]))
  })

  it('idleMs: an idle partition closes its last windows once; a message behind the moved watermark is late; a restart sends none again', async () => {
    // Windows of 100 ms. a@150 closes [0,100) for a and b; nothing then closes [100,200) but the
    // idle partition's watermark, moved on by the wall clock (20 ms of silence first).
    await setup([
      { key: 'a', at: 10 },
      { key: 'b', at: 20 },
      { key: 'a', at: 150 },
      { key: 'b', at: 190 },
    ])
    const options = {
      window: tumbling(100),
      to: 'out',
      lateTo: 'late',
      initial: () => 0,
      add: (n: number) => n + 1,
      idleMs: 20,
    }
    const shown = (rs: Array<WindowResult<number, string>>) => rs.map((r) => [r.key, r.start - T0, r.end - T0, r.value])
    const p = proc()
    const late: string[] = []
    const got: Array<WindowResult<number, string>> = []
    const ac = new AbortController()
    const results = windowed(p, { ...options, onLate: (m) => late.push(m.value) })
    const reading = (async () => {
      const it = results[Symbol.asyncIterator](ac.signal)
      for (let r = await it.next(); r.done !== true; r = await it.next()) got.push(r.value)
    })().catch((e: unknown) => (ac.signal.aborted ? undefined : Promise.reject(e)))
    await until(() => got.length >= 4, 10_000, 'the four windows')
    expect(shown(got)).toEqual([
      ['a', 0, 100, 1],
      ['b', 0, 100, 1],
      ['a', 100, 200, 1],
      ['b', 100, 200, 1],
    ])
    // The watermark passed 200: a click at 180 is late.
    await twain.producer<string, string>('in').send('a', '180', { timestamp: T0 + 180 })
    await until(() => late.length === 1, 10_000, 'the late click')
    expect(late).toEqual(['180'])
    ac.abort()
    await reading
    await p.close()

    // Another member restores the state: the closed windows stay closed; a new key's window closes when idle.
    const p2 = proc()
    const it2 = windowed(p2, options)[Symbol.asyncIterator]()
    await twain.producer<string, string>('in').send('c', 'x', { timestamp: T0 + 1_000_000 })
    const next = (await it2.next()).value as WindowResult<number, string>
    expect(shown([next])).toEqual([['c', 1_000_000, 1_000_100, 1]])
    await it2.return?.()
    await p2.close()
    const stored: string[] = []
    for await (const m of twain.history<{ start: number; end: number; value: number }, string>('out'))
      stored.push(`${m.key} ${m.value.start - T0} ${m.value.value}`)
    expect(stored).toEqual(['a 0 1', 'b 0 1', 'a 100 1', 'b 100 1', 'c 1000000 1'])
    const aside: string[] = []
    for await (const m of twain.history<string>('late')) aside.push(m.value)
    expect(aside).toEqual(['180'])
  })

  it("earlyEvery: a window's aggregate so far after every n-th message, marked early; then its final result", async () => {
    // Tumbling 10 s windows, early results every 2 messages: a's 5 clicks in [0,10) give early
    // counts 2 and 4, then the final 5 once z at 30 s closes it. Sessions of 5 s: b's session so far after each click.
    await setup([
      { key: 'a', at: 1000 },
      { key: 'a', at: 2000 },
      { key: 'a', at: 3000 },
      { key: 'a', at: 4000 },
      { key: 'a', at: 5000 },
      { key: 'z', at: 30_000 },
    ])
    const p = proc()
    const got = await lastValueFrom(
      from(
        windowed(p, { window: tumbling(10_000), to: 'out', earlyEvery: 2, initial: () => 0, add: (n) => n + 1 }),
      ).pipe(take(3), toArray()),
    )
    await p.close()
    expect(got.map((r) => [r.key, r.start - T0, r.value, r.early ?? false])).toEqual([
      ['a', 0, 2, true],
      ['a', 0, 4, true],
      ['a', 0, 5, false],
    ])
    const stored: unknown[] = []
    for await (const m of twain.history<{ start: number; value: number; early?: boolean }, string>('out'))
      stored.push([m.key, m.value.value, m.value.early ?? false])
    expect(stored).toEqual([
      ['a', 2, true],
      ['a', 4, true],
      ['a', 5, false],
    ])

    await twain.producer<string, string>('in').sendBatch([
      { key: 'b', value: 'x', timestamp: T0 + 40_000 },
      { key: 'b', value: 'x', timestamp: T0 + 42_000 },
    ])
    const p2 = proc('sessions')
    const sessions = await lastValueFrom(
      from(
        windowed(p2, {
          window: session(5000),
          to: 'out',
          earlyEvery: 1,
          initial: () => 0,
          add: (n) => n + 1,
          merge: (x, y) => x + y,
        }),
      ).pipe(
        filter((r) => r.key === 'b'),
        take(2),
        toArray(),
      ),
    )
    await p2.close()
    expect(sessions.map((r) => [r.start - T0, r.end - T0, r.value, r.early])).toEqual([
      [40_000, 40_001, 1, true],
      [40_000, 42_001, 2, true],
    ])
  })

  it('refuses bad options by name', () => {
    const p = proc('bad')
    expect(() => tumbling(0)).toThrow(/tumbling\(\) size must be a positive integer of ms, got 0/)
    expect(() => hopping(10, 20)).toThrow(/advance 20 ms is larger than its size 10 ms/)
    const base = { window: tumbling(10), to: 'out', initial: () => 0, add: (n: number) => n }
    expect(() => windowed(p, { ...base, latenessMs: -1 })).toThrow(/latenessMs must be a non-negative integer, got -1/)
    expect(() => windowed(p, { ...base, to: 1 as unknown as string })).toThrow(InvalidArgumentError)
    expect(() => windowed(p, { ...base, window: {} as never })).toThrow(
      /tumbling\(ms\), hopping\(ms, advanceMs\) or session\(gapMs\)/,
    )
    expect(() => windowed(p, { ...base, window: session(1000) })).toThrow(/session windows needs merge/)
    expect(() => session(-5)).toThrow(/session\(\) gap must be a positive integer of ms, got -5/)
    expect(() => hopping(60_000, 10)).toThrow(/puts an event in 6000 windows, more than 500/)
    expect(() => windowed(p, { ...base, idleMs: 0 })).toThrow(/idleMs must be a positive integer \(ms\), got 0/)
    expect(() => windowed(p, { ...base, earlyEvery: 1.5 })).toThrow(
      /earlyEvery must be a positive integer \(messages\), got 1.5/,
    )
  })
})
