import { describe, expect, it } from 'vitest'
import { InvalidArgumentError, TopicNotFoundError, open, type Message } from '../../../src/index.js'
import { collect, takeN } from '../../unit/helpers.js'
import { sleep, until } from '../../helpers/wait.js'
import { directoryWatches } from '../../helpers/waiting-reads.js'
import { useFileStore } from '../../helpers/file-store.js'

const range = (from: number, to: number) => Array.from({ length: Math.max(0, to - from) }, (_, i) => from + i)
const po = (ms: Message[]) => ms.map((m) => [m.partition, m.offset])

describe('tail options', () => {
  const store = useFileStore({ clientId: 'me', pollMs: 50 }, async (twain) => {
    await twain.createTopic('t', { partitions: 2 })
    const p = twain.producer('t')
    await p.sendBatch(range(0, 4).map((i) => ({ key: i, value: `old-p0-${i}`, partition: 0 })))
    await p.sendBatch(range(0, 2).map((i) => ({ key: i, value: `old-p1-${i}`, partition: 1 })))
  })

  it("from 'end' (the default) delivers only messages sent after tail() was called, even before iterating", async () => {
    const stream = store.twain.tail('t')
    const p = store.twain.producer('t')
    await p.send(1, 'new-0', { partition: 0 })
    await p.send(1, 'new-1', { partition: 1 })
    const got = await takeN(stream, 2)
    expect(got.map((m) => m.value).sort()).toEqual(['new-0', 'new-1'])
    expect(po(got).sort()).toEqual([
      [0, 4],
      [1, 2],
    ])
  })

  it("from 'end' picks up a message sent while the tail is waiting", async () => {
    const before = directoryWatches()
    const got = takeN(store.twain.tail('t', { from: 'end' }), 1)
    await until(() => directoryWatches() > before, 5000, 'the tail to wait on a watch')
    await store.twain.producer('t').send(1, 'live', { partition: 1 })
    expect((await got).map((m) => [m.partition, m.offset, m.value])).toEqual([[1, 2, 'live']])
  })

  it("from 'start' delivers every retained message, per partition in offset order", async () => {
    const got = await takeN(store.twain.tail('t', { from: 'start' }), 6)
    const p0 = got.filter((m) => m.partition === 0)
    const p1 = got.filter((m) => m.partition === 1)
    expect(p0.map((m) => m.offset)).toEqual([0, 1, 2, 3])
    expect(p1.map((m) => m.offset)).toEqual([0, 1])
    expect(p0.map((m) => m.value)).toEqual(range(0, 4).map((i) => `old-p0-${i}`))
  })

  it('from { offset: n } starts every partition at n', async () => {
    const got = await takeN(store.twain.tail('t', { from: { offset: 1 } }), 4)
    expect(po(got).sort()).toEqual([
      [0, 1],
      [0, 2],
      [0, 3],
      [1, 1],
    ])
  })

  it('from { offset: { p: n } } starts that partition at n and the others at the end', async () => {
    const stream = store.twain.tail('t', { from: { offset: { 0: 2 } } })
    await store.twain.producer('t').send(9, 'p1-new', { partition: 1 })
    const got = await takeN(stream, 3)
    expect(po(got).sort()).toEqual([
      [0, 2],
      [0, 3],
      [1, 2],
    ])
  })

  it('from { time } starts at the first message at or after that time', async () => {
    await sleep(20) // time is the subject: messages on both sides of t have other timestamps
    const t = Date.now()
    await sleep(20)
    await store.twain.producer('t').send(5, 'after-t', { partition: 1 })
    const got = await takeN(store.twain.tail('t', { from: { time: t } }), 1)
    expect(got.map((m) => [m.partition, m.offset, m.value])).toEqual([[1, 2, 'after-t']])
    const viaDate = await takeN(store.twain.tail('t', { from: { time: new Date(t) } }), 1)
    expect(viaDate[0]?.value).toBe('after-t')
  })

  it('partitions limits the tail to those partitions', async () => {
    const stream = store.twain.tail('t', { from: 'start', partitions: [1] })
    const p = store.twain.producer('t')
    await p.send(1, 'p0-x', { partition: 0 })
    await p.send(1, 'p1-x', { partition: 1 })
    const got = await takeN(stream, 3)
    expect(got.every((m) => m.partition === 1)).toBe(true)
    expect(got.map((m) => m.value)).toEqual(['old-p1-0', 'old-p1-1', 'p1-x'])
  })

  it('skipOwn skips messages of this instance and delivers those of another instance (another clientId) on the same dir', async () => {
    const other = await open(store.dir, { clientId: 'other', pollMs: 50 })
    try {
      const stream = store.twain.tail('t', { skipOwn: true, partitions: [0] })
      const mine = store.twain.producer('t')
      const theirs = other.producer('t')
      await mine.send(1, 'own-1', { partition: 0 })
      await theirs.send(1, 'other-1', { partition: 0 })
      await mine.send(1, 'own-2', { partition: 0 })
      await theirs.send(1, 'other-2', { partition: 0 })
      const got = await takeN(stream, 2)
      expect(got.map((m) => m.value)).toEqual(['other-1', 'other-2'])
      expect(got.map((m) => m.producerId)).toEqual(['other', 'other'])
      expect(got.map((m) => m.offset)).toEqual([5, 7])
      // without skipOwn the same range has both
      const all = await takeN(store.twain.tail('t', { from: { offset: 4 }, partitions: [0] }), 4)
      expect(all.map((m) => m.producerId)).toEqual(['me', 'other', 'me', 'other'])
    } finally {
      await other.close()
    }
  })

  it("a tail in one instance sees another instance's appends (cross-instance wake-up)", async () => {
    const other = await open(store.dir, { clientId: 'other' })
    try {
      const before = directoryWatches()
      const got = takeN(store.twain.tail('t', { partitions: [1] }), 1)
      await until(() => directoryWatches() > before, 5000, 'the tail to wait on a watch')
      await other.producer('t').send(3, 'from-other', { partition: 1 })
      expect((await got).map((m) => [m.value, m.producerId])).toEqual([['from-other', 'other']])
    } finally {
      await other.close()
    }
  })

  it('tails several topics at once, each message naming its topic', async () => {
    await store.twain.createTopic('u', { keyType: 'string' })
    await store.twain.producer('u').send('k', 'u-old')
    const stream = store.twain.tail(['t', 'u'], { from: 'start' })
    await store.twain.producer('u').send('k2', 'u-new')
    const got = await takeN(stream, 8)
    const byTopic = (t: string) => got.filter((m) => m.topic === t)
    expect(byTopic('t')).toHaveLength(6)
    expect(byTopic('u').map((m) => [m.offset, m.key, m.value])).toEqual([
      [0, 'k', 'u-old'],
      [1, 'k2', 'u-new'],
    ])
  })

  it('each iteration of a tail stream is independent and starts from its own "from"', async () => {
    const s = store.twain.tail('t', { from: 'start', partitions: [1] })
    expect((await takeN(s, 2)).map((m) => m.offset)).toEqual([0, 1])
    expect((await takeN(s, 2)).map((m) => m.offset)).toEqual([0, 1])
  })

  it('rejects bad arguments: no topics, a missing partition, a missing topic', async () => {
    expect(() => store.twain.tail([])).toThrow(InvalidArgumentError)
    await expect(collect(store.twain.tail('t', { partitions: [5] }))).rejects.toBeInstanceOf(InvalidArgumentError)
    await expect(collect(store.twain.tail('t', { partitions: [5] }))).rejects.toThrow(/5/)
    await expect(collect(store.twain.tail('missing'))).rejects.toBeInstanceOf(TopicNotFoundError)
  })
})
