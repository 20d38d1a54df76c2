// Conformance: event time (DESIGN §3.12) — a send's own timestamp, reads and group positions from a
// time when timestamps do not grow with offsets, and the refusals — on every store kind.
import { describe, expect, it } from 'vitest'
import { InvalidArgumentError, type Consumer, type GroupMessage, type Twain } from '../../src/index.js'
import { within } from '../helpers/wait.js'
import { backends, everyStore, perTest } from './backends.js'

const T0 = Date.UTC(2026, 0, 1)
/** Offsets 0..6 of partition 0 stamped out of order; the first at or after T0 + 51 is offset 2. */
const STAMPS = [50, 10, 90, 20, 60, 5, 95].map((d) => T0 + d)
const kindsWithCompat = () => [...backends(), ...everyStore().filter((k) => k.name === 'twainmq-v1')]

async function fillStamped(twain: Twain, topic = 't'): Promise<void> {
  await twain.createTopic(topic)
  const p = twain.producer<string>(topic)
  for (const [i, t] of STAMPS.entries()) await p.send(i, `m${i}`, { timestamp: i % 2 ? new Date(t) : t })
  await p.close()
}

async function take<T>(it: AsyncIterable<T>, n: number): Promise<T[]> {
  const out: T[] = []
  if (n === 0) return out
  for await (const m of it) if (out.push(m) >= n) break
  return out
}

async function offsetsOf(c: Consumer<string>, n: number): Promise<number[]> {
  const got = await within(take<GroupMessage<string>>(c, n), 10_000, `${n} messages`)
  for (const m of got) m.ack()
  return got.map((m) => m.offset)
}

describe.each(kindsWithCompat())('event time on $name', (kind) => {
  kind.hooks()
  const ctx = perTest(kind)

  it('send({ timestamp }) and sendBatch items store the given time (ms or Date); without it, the append time', async () => {
    const { twain } = ctx
    await twain.createTopic('t')
    const p = twain.producer<string>('t')
    const before = Date.now()
    await p.send(1, 'a', { timestamp: T0 + 0.5 })
    await p.send(2, 'b', { timestamp: new Date(T0 - 86_400_000) })
    await p.sendBatch([
      { key: 3, value: 'c', timestamp: T0 + 7 },
      { key: 4, value: 'd' },
    ])
    await p.send(5, 'e')
    const after = Date.now()
    const got = await take(twain.history<string>('t'), 5)
    expect(got.slice(0, 3).map((m) => m.timestamp)).toEqual([T0 + 0.5, T0 - 86_400_000, T0 + 7])
    for (const m of got.slice(3)) {
      expect(m.timestamp).toBeGreaterThanOrEqual(before)
      expect(m.timestamp).toBeLessThanOrEqual(after)
    }
  })

  it('a bad timestamp is refused with InvalidArgumentError naming it, and nothing is written', async () => {
    const { twain } = ctx
    await twain.createTopic('t')
    const p = twain.producer<string>('t')
    for (const [bad, shown] of [
      [Number.NaN, 'NaN'],
      [-1, '-1'],
      [Number.POSITIVE_INFINITY, 'Infinity'],
      [new Date('nope'), 'Invalid Date'],
      ['2026-01-01', '"2026-01-01"'],
    ] as const) {
      const e = await p.send(1, 'x', { timestamp: bad as never }).catch((err: unknown) => err)
      expect(e).toBeInstanceOf(InvalidArgumentError)
      expect((e as Error).message).toContain(`got ${shown}`)
    }
    await expect(
      p.sendBatch([
        { key: 1, value: 'ok' },
        { key: 2, value: 'x', timestamp: -5 },
      ]),
    ).rejects.toThrow(/timestamp .*got -5/)
    // An id is remembered by the time its message is stored: not with an event time.
    await expect(p.send(1, 'x', { id: 'a', timestamp: T0 })).rejects.toThrow(
      /with an id \("a"\) cannot give its own timestamp/,
    )
    expect((await twain.describeTopic('t')).offsets).toEqual([{ partition: 0, start: 0, end: 0 }])
  })

  it('history and tail from { time } start at the first offset whose timestamp is at or after it', async () => {
    const { twain } = ctx
    await fillStamped(twain)
    const history = async (time: number | Date) =>
      (await take(twain.history('t', { from: { time } }), 7)).map((m) => m.offset)
    expect(await history(T0 + 51)).toEqual([2, 3, 4, 5, 6]) // not 4: offset 2 is the first at or after
    expect(await history(new Date(T0 + 91))).toEqual([6])
    expect(await history(T0 + 96)).toEqual([])
    expect(await history(T0)).toEqual([0, 1, 2, 3, 4, 5, 6])
    const tail = twain.tail<string>('t', { from: { time: T0 + 51 } })
    expect((await within(take(tail, 5), 10_000, 'the tail')).map((m) => m.offset)).toEqual([2, 3, 4, 5, 6])
  })

  it('resetGroup(group, topic, { time }) sets each partition to its first offset at or after the time; past the end, the end', async () => {
    const { twain } = ctx
    await fillStamped(twain)
    await twain.resetGroup('g', 't', { time: T0 + 51 })
    expect((await twain.describeGroup('g')).topics.map((r) => r.committed)).toEqual([2])
    await twain.resetGroup('g', 't', { time: new Date(T0 + 1_000_000) })
    expect((await twain.describeGroup('g')).topics.map((r) => r.committed)).toEqual([7])
    await twain.resetGroup('g', 't', { time: T0 + 91 })
    const c = twain.consumer<string>('t', { group: 'g' })
    try {
      expect(await offsetsOf(c, 1)).toEqual([6])
    } finally {
      await c.close()
    }
    for (const bad of [Number.NaN, -1, new Date('nope')]) {
      const e = await twain.resetGroup('g', 't', { time: bad }).catch((err: unknown) => err)
      expect(e).toBeInstanceOf(InvalidArgumentError)
      expect((e as Error).message).toMatch(/resetGroup\(\) target time .*got (NaN|-1|Invalid Date)/)
    }
  })

  it('consumer.seek(topic, partition, { time }) continues from the first offset at or after the time', async () => {
    const { twain } = ctx
    await fillStamped(twain)
    const c = twain.consumer<string>('t', { group: 'g' })
    try {
      expect(await offsetsOf(c, 7)).toEqual([0, 1, 2, 3, 4, 5, 6])
      await c.seek('t', 0, { time: T0 + 51 })
      expect(await offsetsOf(c, 5)).toEqual([2, 3, 4, 5, 6])
      await c.seek('t', 0, { time: new Date(T0 + 60) })
      expect(await offsetsOf(c, 5)).toEqual([2, 3, 4, 5, 6]) // offset 2 (T0 + 90) is the first at or after
      await c.seek('t', 0, { time: T0 + 91 })
      expect(await offsetsOf(c, 1)).toEqual([6])
      await expect(c.seek('t', 0, { time: Number.NaN })).rejects.toBeInstanceOf(InvalidArgumentError)
      await expect(c.seek('nope', 0, { time: T0 })).rejects.toBeInstanceOf(InvalidArgumentError)
      // Past the end: the end, so only what is sent next is delivered.
      await c.seek('t', 0, { time: T0 + 1_000_000 })
      await twain.producer<string>('t').send(9, 'next', { timestamp: T0 })
      expect(await offsetsOf(c, 1)).toEqual([7])
    } finally {
      await c.close()
    }
  })

  if (kind.caps.headers)
    it("a processor's outputs keep the timestamp they are sent with (event time through a pipeline)", async () => {
      const { twain } = ctx
      await fillStamped(twain)
      await twain.createTopic('out')
      const proc = twain.processor<string>('t', { group: 'p' })
      try {
        const got = await within(take(proc, 7), 10_000, '7 inputs')
        for (const m of got) {
          await m.send('out', m.key, m.value, { timestamp: m.timestamp })
          m.ack()
        }
      } finally {
        await proc.close()
      }
      expect((await take(twain.history('out'), 7)).map((m) => m.timestamp)).toEqual(STAMPS)
    })
})
