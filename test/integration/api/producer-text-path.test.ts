import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  InvalidArgumentError,
  InvalidKeyError,
  MessageTooLargeError,
  TopicNotFoundError,
  open,
  type Twain,
} from '../../../src/index.js'
import { collect, frameCounts, makeTmp, rmTmp } from '../../unit/helpers.js'

// Plain text sends (string value, no headers, no type) are encoded straight into frames
// (src/producer/text-flush.ts); everything else takes the general path. Both must behave the same.
describe('producer: plain text sends', () => {
  let dir: string
  let twain: Twain
  beforeEach(async () => {
    dir = makeTmp()
    twain = await open(dir)
  })
  afterEach(async () => {
    await twain.close()
    rmTmp(dir)
  })

  it('a tick of sends over several partitions: one frame each, dense offsets in send order, a bad send failing alone', async () => {
    await twain.createTopic('t', { partitions: 3, keyType: 'u16', maxMessageBytes: 1000 })
    const p = twain.producer<string, number>('t')
    const sends = Array.from({ length: 300 }, (_, i) => p.send(i, `v${i}`))
    const badKey = p.send(70_000 as number, 'key out of range')
    const tooBig = p.send(5, 'x'.repeat(1001))
    const results = await Promise.all(sends)
    await expect(badKey).rejects.toBeInstanceOf(InvalidKeyError)
    await expect(tooBig).rejects.toBeInstanceOf(MessageTooLargeError)
    for (let part = 0; part < 3; part++) {
      const mine = results.filter((r) => r.partition === part)
      expect(mine.map((r) => r.offset)).toEqual(mine.map((_, i) => i))
      expect(frameCounts(dir, 't', part)).toEqual([mine.length])
    }
    const read = await collect(twain.history<string>('t'))
    expect(read).toHaveLength(300)
    for (const m of read) {
      const i = Number(m.value.slice(1))
      expect(m.key).toBe(i)
      expect(results[i]).toEqual({ partition: m.partition, offset: m.offset })
      expect(m.headers).toEqual({})
    }
    expect(new Set(read.map((m) => m.timestamp)).size).toBe(1)
  })

  it('a tick mixing plain sends with headers, bytes and JSON keeps send order in one frame', async () => {
    await twain.createTopic('m', { keyType: 'string' })
    const p = twain.producer<unknown, string>('m')
    const r = await Promise.all([
      p.send('a', 'one'),
      p.send('b', 'two', { headers: { h: '1' } }),
      p.send('c', Buffer.from('three')),
      p.send('d', { n: 4 }),
      p.send('e', 'five'),
    ])
    expect(r.map((x) => x.offset)).toEqual([0, 1, 2, 3, 4])
    expect(frameCounts(dir, 'm', 0)).toEqual([5])
    const read = await collect(twain.history('m'))
    expect(read.map((m) => m.key)).toEqual(['a', 'b', 'c', 'd', 'e'])
    expect(read[1]!.headers).toEqual({ h: '1' })
    expect(read[4]!.value).toBe('five')
  })

  it('more plain sends in a tick than maxBatch are split into frames with dense offsets', async () => {
    await twain.createTopic('b')
    const p = twain.producer<string>('b', { maxBatch: 40 })
    const r = await Promise.all(Array.from({ length: 100 }, (_, i) => p.send(i, `v${i}`)))
    expect(r.map((x) => x.offset)).toEqual(r.map((_, i) => i))
    expect(frameCounts(dir, 'b', 0)).toEqual([40, 40, 20])
  })

  it('frames are reused from flush to flush without mixing their records', async () => {
    await twain.createTopic('r')
    const p = twain.producer<string>('r')
    for (let round = 0; round < 5; round++)
      await Promise.all(Array.from({ length: 50 - round * 10 }, (_, i) => p.send(i, `r${round}-${i}`)))
    const read = await collect(twain.history<string>('r'))
    expect(read.map((m) => m.value)).toEqual(
      [0, 1, 2, 3, 4].flatMap((round) => Array.from({ length: 50 - round * 10 }, (_, i) => `r${round}-${i}`)),
    )
    expect(frameCounts(dir, 'r', 0)).toEqual([50, 40, 30, 20, 10])
  })

  it('a topic deleted under a producer rejects its sends with TopicNotFoundError; re-created, it is written again', async () => {
    await twain.createTopic('d')
    const p = twain.producer<string>('d')
    expect(await p.send(1, 'before')).toEqual({ partition: 0, offset: 0 })
    await twain.deleteTopic('d')
    await expect(p.send(1, 'lost')).rejects.toBeInstanceOf(TopicNotFoundError)
    await twain.createTopic('d')
    expect(await p.send(1, 'after')).toEqual({ partition: 0, offset: 0 })
    expect((await collect(twain.history<string>('d'))).map((m) => m.value)).toEqual(['after'])
  })

  it('with each fsync policy, flushes in flight at once keep their own frames and the send order', async () => {
    for (const fsync of ['batch', 'always', 50] as const) {
      const t = await open(`${dir}-${String(fsync)}`, { fsync })
      try {
        await t.createTopic('f')
        const p = t.producer<string>('f')
        const ticks: Array<Promise<unknown>> = []
        for (let tick = 0; tick < 4; tick++) {
          ticks.push(Promise.all(Array.from({ length: 30 }, (_, i) => p.send(i, `${tick}-${i}`))))
          await Promise.resolve() // the next tick's sends queue while this flush may still be writing
        }
        await Promise.all(ticks)
        const read = await collect(t.history<string>('f'))
        expect(read.map((m) => m.value)).toEqual(
          [0, 1, 2, 3].flatMap((tick) => Array.from({ length: 30 }, (_, i) => `${tick}-${i}`)),
        )
        expect(read.map((m) => m.offset)).toEqual(read.map((_, i) => i))
      } finally {
        await t.close()
        rmTmp(`${dir}-${String(fsync)}`)
      }
    }
  })

  it('a sendBatch of plain text items over several partitions: one frame each, offsets in item order, one timestamp', async () => {
    await twain.createTopic('sb', { partitions: 3, keyType: 'u16' })
    const p = twain.producer<string, number>('sb')
    const items = Array.from({ length: 200 }, (_, i) => ({ key: i, value: `v${i}` }))
    items.push({ key: 7, value: 'pinned', partition: 2 } as (typeof items)[number])
    const first = await p.sendBatch(items)
    const second = await p.sendBatch(items.slice(0, 20))
    for (let part = 0; part < 3; part++) {
      const mine = [...first, ...second].filter((r) => r.partition === part)
      expect(mine.map((r) => r.offset)).toEqual(mine.map((_, i) => i))
      expect(frameCounts(dir, 'sb', part)).toEqual([
        first.filter((r) => r.partition === part).length,
        second.filter((r) => r.partition === part).length,
      ])
    }
    expect(first[200]!.partition).toBe(2)
    const read = await collect(twain.history<string>('sb', { to: 1_000_000 }))
    expect(read).toHaveLength(221)
    const byPlace = new Map(read.map((m) => [`${m.partition}/${m.offset}`, m]))
    first.forEach((r, i) => {
      const m = byPlace.get(`${r.partition}/${r.offset}`)!
      expect([m.key, m.value, m.headers]).toEqual([items[i]!.key, items[i]!.value, {}])
    })
    const stamps = new Set(first.map((r) => byPlace.get(`${r.partition}/${r.offset}`)!.timestamp))
    expect(stamps.size).toBe(1)
  })

  it('one bad item of a plain text sendBatch writes nothing, with the error the general path gives', async () => {
    await twain.createTopic('bad', { partitions: 2, keyType: 'u16', maxMessageBytes: 100 })
    const p = twain.producer<string, number>('bad')
    const good = Array.from({ length: 50 }, (_, i) => ({ key: i, value: `v${i}` }))
    await expect(p.sendBatch([...good, { key: 70_000, value: 'key out of range' }])).rejects.toBeInstanceOf(
      InvalidKeyError,
    )
    await expect(p.sendBatch([...good, { key: 1, value: 'x'.repeat(101) }])).rejects.toBeInstanceOf(
      MessageTooLargeError,
    )
    await expect(p.sendBatch([...good, { key: 1, value: 'x', partition: 2 }])).rejects.toBeInstanceOf(
      InvalidArgumentError,
    )
    expect(await twain.length('bad')).toBe(0)
    const r = await p.sendBatch(good)
    for (const part of [0, 1]) {
      const mine = r.filter((x) => x.partition === part)
      expect(mine.map((x) => x.offset)).toEqual(mine.map((_, i) => i))
    }
    expect(await twain.length('bad')).toBe(50)
  })

  it('a sendBatch mixing plain text with other items, or larger than maxBatch, is written as before', async () => {
    await twain.createTopic('mix', { keyType: 'string' })
    const p = twain.producer<unknown, string>('mix', { maxBatch: 40 })
    const r = await p.sendBatch([
      { key: 'a', value: 'one' },
      { key: 'b', value: 'two', headers: { h: '1' } },
      { key: 'c', value: Buffer.from('three') },
      { key: 'd', value: 'four' },
    ])
    expect(r).toEqual([0, 1, 2, 3].map((offset) => ({ partition: 0, offset })))
    const big = await p.sendBatch(Array.from({ length: 100 }, (_, i) => ({ key: `k${i}`, value: `v${i}` })))
    expect(big.map((x) => x.offset)).toEqual(big.map((_, i) => i + 4))
    expect(frameCounts(dir, 'mix', 0)).toEqual([4, 40, 40, 20])
    const read = await collect(twain.history('mix'))
    expect(read[1]!.headers).toEqual({ h: '1' })
    expect(read.slice(4).map((m) => m.value)).toEqual(big.map((_, i) => `v${i}`))
  })

  it('a plain text sendBatch: TopicNotFoundError once its topic is deleted, written again once re-created; with fsync batch too', async () => {
    for (const fsync of ['never', 'batch'] as const) {
      const root = `${dir}-sb-${fsync}`
      const t = await open(root, { fsync })
      try {
        await t.createTopic('d', { partitions: 2 })
        const p = t.producer<string>('d')
        const items = Array.from({ length: 30 }, (_, i) => ({ key: i, value: `v${i}` }))
        const before = await p.sendBatch(items)
        expect(before.filter((x) => x.partition === 0).map((x) => x.offset)).toEqual(
          before.filter((x) => x.partition === 0).map((_, i) => i),
        )
        await t.deleteTopic('d')
        await expect(p.sendBatch(items)).rejects.toBeInstanceOf(TopicNotFoundError)
        await t.createTopic('d', { partitions: 2 })
        const after = await p.sendBatch(items)
        expect(after).toEqual(before)
        expect(await t.length('d')).toBe(30)
      } finally {
        await t.close()
        rmTmp(root)
      }
    }
  })
})
