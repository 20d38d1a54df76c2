import { describe, expect, it } from 'vitest'
import { InvalidArgumentError, TopicNotFoundError, type HistoryOptions, type Message } from '../../../src/index.js'
import { collect } from '../../unit/helpers.js'
import { sleep } from '../../helpers/wait.js'
import { useFileStore } from '../../helpers/file-store.js'

const range = (from: number, to: number) => Array.from({ length: Math.max(0, to - from) }, (_, i) => from + i)
const po = (ms: Message[]) => ms.map((m) => [m.partition, m.offset])

describe('history options', () => {
  const store = useFileStore({}, async (twain) => {
    await twain.createTopic('h', { partitions: 2 })
    const p = twain.producer('h')
    await p.sendBatch(range(0, 10).map((i) => ({ key: i, value: `p0-${i}`, partition: 0 })))
    await p.sendBatch(range(0, 5).map((i) => ({ key: i, value: `p1-${i}`, partition: 1 })))
  })

  it('without options reads every partition, one after the other in partition order, and completes', async () => {
    const all = await collect(store.twain.history('h'))
    expect(po(all)).toEqual([...range(0, 10).map((o) => [0, o]), ...range(0, 5).map((o) => [1, o])])
    expect(all[0]?.value).toBe('p0-0')
    expect(all[10]?.value).toBe('p1-0')
  })

  it('partition reads only that partition', async () => {
    const got = await collect(store.twain.history('h', { partition: 1 }))
    expect(po(got)).toEqual(range(0, 5).map((o) => [1, o]))
    expect(got.map((m) => m.value)).toEqual(range(0, 5).map((i) => `p1-${i}`))
  })

  it('from starts at that offset in every partition', async () => {
    expect(po(await collect(store.twain.history('h', { from: 3 })))).toEqual([
      ...range(3, 10).map((o) => [0, o]),
      ...range(3, 5).map((o) => [1, o]),
    ])
    expect(po(await collect(store.twain.history('h', { from: 7 })))).toEqual(range(7, 10).map((o) => [0, o]))
    expect(await collect(store.twain.history('h', { from: 100 }))).toEqual([])
  })

  it('to is exclusive', async () => {
    expect(po(await collect(store.twain.history('h', { to: 4 })))).toEqual([
      ...range(0, 4).map((o) => [0, o]),
      ...range(0, 4).map((o) => [1, o]),
    ])
    expect(po(await collect(store.twain.history('h', { partition: 0, from: 2, to: 6 })))).toEqual(
      range(2, 6).map((o) => [0, o]),
    )
    expect(await collect(store.twain.history('h', { partition: 0, from: 5, to: 5 }))).toEqual([])
    expect(await collect(store.twain.history('h', { partition: 0, to: 0 }))).toEqual([])
    expect(po(await collect(store.twain.history('h', { partition: 1, to: 99 })))).toEqual(
      range(0, 5).map((o) => [1, o]),
    )
  })

  it('limit caps the number of messages (across partitions in partition order)', async () => {
    expect(po(await collect(store.twain.history('h', { limit: 4 })))).toEqual(range(0, 4).map((o) => [0, o]))
    expect(po(await collect(store.twain.history('h', { limit: 12 })))).toEqual([
      ...range(0, 10).map((o) => [0, o]),
      [1, 0],
      [1, 1],
    ])
    expect(po(await collect(store.twain.history('h', { partition: 1, from: 2, limit: 2 })))).toEqual([
      [1, 2],
      [1, 3],
    ])
    expect(await collect(store.twain.history('h', { limit: 0 }))).toEqual([])
  })

  it('reverse with limit gives the n most recent of a partition, newest first', async () => {
    expect(po(await collect(store.twain.history('h', { partition: 0, reverse: true, limit: 3 })))).toEqual([
      [0, 9],
      [0, 8],
      [0, 7],
    ])
    expect(po(await collect(store.twain.history('h', { partition: 0, reverse: true })))).toEqual(
      range(0, 10)
        .reverse()
        .map((o) => [0, o]),
    )
    expect(po(await collect(store.twain.history('h', { partition: 0, reverse: true, from: 2, to: 6 })))).toEqual(
      range(2, 6)
        .reverse()
        .map((o) => [0, o]),
    )
  })

  it('reverse with limit over a long partition reads back in chunks, newest first', async () => {
    await store.twain.createTopic('long')
    const p = store.twain.producer('long')
    for (let b = 0; b < 10; b++)
      await p.sendBatch(range(b * 100, b * 100 + 100).map((i) => ({ key: i % 65536, value: i })))
    const got = await collect(store.twain.history('long', { reverse: true, limit: 750 }))
    expect(got.map((m) => m.offset)).toEqual(range(250, 1000).reverse())
    expect(got.map((m) => m.value)).toEqual(range(250, 1000).reverse())
  })

  it('reverse with limit without a partition gives the n newest across partitions by timestamp', async () => {
    await store.twain.createTopic('ts', { partitions: 3 })
    const p = store.twain.producer('ts')
    const sent: Array<[number, number]> = []
    for (let i = 0; i < 9; i++) {
      const r = await p.send(i, i, { partition: (i * 2) % 3 })
      sent.push([r.partition, r.offset])
      await sleep(3) // distinct timestamps
    }
    const got = await collect(store.twain.history('ts', { reverse: true, limit: 5 }))
    expect(got.map((m) => m.value)).toEqual([8, 7, 6, 5, 4])
    expect(po(got)).toEqual(sent.slice(4).reverse())
    const ts = got.map((m) => m.timestamp)
    expect([...ts].sort((a, b) => b - a)).toEqual(ts)
  })

  it('from { time } starts at the first message at or after that time (number or Date)', async () => {
    await store.twain.createTopic('time')
    const p = store.twain.producer('time')
    await p.sendBatch(range(0, 3).map((i) => ({ key: i, value: `early-${i}` })))
    await sleep(25) // time is the subject: messages on both sides of t have other timestamps
    const t = Date.now()
    await sleep(25)
    await p.sendBatch(range(0, 3).map((i) => ({ key: i, value: `late-${i}` })))
    const late = await collect(store.twain.history('time', { from: { time: t } }))
    expect(late.map((m) => m.value)).toEqual(['late-0', 'late-1', 'late-2'])
    expect(late.map((m) => m.offset)).toEqual([3, 4, 5])
    expect((await collect(store.twain.history('time', { from: { time: new Date(t) } }))).map((m) => m.offset)).toEqual([
      3, 4, 5,
    ])
    expect((await collect(store.twain.history('time', { from: { time: 0 } }))).map((m) => m.offset)).toEqual(
      range(0, 6),
    )
    expect(await collect(store.twain.history('time', { from: { time: Date.now() + 60_000 } }))).toEqual([])
  })

  it('reads nothing from an empty topic and completes', async () => {
    await store.twain.createTopic('empty', { partitions: 3 })
    expect(await collect(store.twain.history('empty'))).toEqual([])
    expect(await collect(store.twain.history('empty', { reverse: true, limit: 5 }))).toEqual([])
  })

  it('is a snapshot: messages sent after the read started are not included', async () => {
    const it = store.twain.history('h', { partition: 0 })[Symbol.asyncIterator]()
    const first = await it.next()
    expect(first.value?.offset).toBe(0)
    await store.twain.producer('h').send(1, 'later', { partition: 0 })
    const rest: number[] = []
    for (let r = await it.next(); !r.done; r = await it.next()) rest.push(r.value.offset)
    expect(rest).toEqual(range(1, 10))
  })

  it('each iteration of a history stream is independent (cold)', async () => {
    const s = store.twain.history('h', { partition: 1 })
    expect((await collect(s)).length).toBe(5)
    expect((await collect(s)).length).toBe(5)
  })

  it('rejects a partition that does not exist and a bad limit with InvalidArgumentError', async () => {
    await expect(collect(store.twain.history('h', { partition: 2 }))).rejects.toBeInstanceOf(InvalidArgumentError)
    expect(() => store.twain.history('h', { partition: -1 })).toThrow(
      /option partition must be an integer 0\.\.\d+, got -1/,
    )
    expect(() => store.twain.history('h', { limit: -1 })).toThrow(InvalidArgumentError)
    expect(() => store.twain.history('h', { limit: 1.5 })).toThrow(InvalidArgumentError)
  })

  it('refuses offsets that are not whole numbers from 0, a bad time, and to before from, naming the value', () => {
    const refused: Array<[HistoryOptions, RegExp]> = [
      [{ from: -3 }, /option from must be an integer 0\.\.\d+, got -3/],
      [{ from: 1.5 }, /option from must be an integer 0\.\.\d+, got 1\.5/],
      [{ from: '2' as unknown as number }, /option from must be an offset .* or \{ time \}, got "2"/],
      [{ to: -1 }, /option to must be an integer 0\.\.\d+, got -1/],
      [{ to: 2.5 }, /option to must be an integer 0\.\.\d+, got 2\.5/],
      [{ from: 5, to: 2 }, /option to \(2\) is before from \(5\)/],
      [
        { from: { time: new Date('nope') } },
        /option from\.time must be a valid Date or finite milliseconds since the epoch, got Invalid Date/,
      ],
      [{ from: { time: Number.NaN } }, /option from\.time must be .*, got NaN/],
    ]
    for (const [options, text] of refused) {
      expect(() => store.twain.history('h', options), JSON.stringify(options)).toThrow(InvalidArgumentError)
      expect(() => store.twain.history('h', options), JSON.stringify(options)).toThrow(text)
    }
  })

  it('to === from is an empty range, to > from reads from..to-1', async () => {
    expect(await collect(store.twain.history('h', { partition: 0, from: 2, to: 2 }))).toEqual([])
    expect((await collect(store.twain.history('h', { partition: 0, from: 1, to: 3 }))).map((m) => m.offset)).toEqual([
      1, 2,
    ])
  })

  it('rejects a missing topic with TopicNotFoundError', async () => {
    await expect(collect(store.twain.history('missing'))).rejects.toBeInstanceOf(TopicNotFoundError)
  })
})
