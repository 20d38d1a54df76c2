// Event-time windows (`windowed`, `tumbling`, `hopping`; README "Windows") through the public API,
// on a directory and on Redis: hopping windows hold a message in each window it falls in; an
// `eventTime` function replaces the timestamp; late messages go to `onLate` and `lateTo`; the
// stream's results say where they are stored and match the topic; bad options are refused by name.
import { from, lastValueFrom, take, toArray } from 'rxjs'
import { describe, expect, it } from 'vitest'
import { hopping, InvalidArgumentError, session, tumbling, windowed, type WindowResult } from '../../../src/index.js'
import { backends } from '../../conformance/backends.js'
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
  })
})
