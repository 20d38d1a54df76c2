import { beforeEach, describe, expect, it } from 'vitest'
import { InvalidArgumentError, open, type Message } from '../../../src/index.js'
import { collect, segmentFiles, takeN } from '../../unit/helpers.js'
import { until } from '../../helpers/wait.js'
import { useFileStore } from '../../helpers/file-store.js'

function byPartition(msgs: Message[]): Map<number, number[]> {
  const m = new Map<number, number[]>()
  for (const x of msgs) {
    const l = m.get(x.partition) ?? []
    l.push(x.offset)
    m.set(x.partition, l)
  }
  return m
}

const range = (from: number, to: number) => Array.from({ length: Math.max(0, to - from) }, (_, i) => from + i)

describe('offsets', () => {
  const store = useFileStore()

  it('assigns dense offsets 0..n-1 per partition to concurrent sends across partitions', async () => {
    await store.twain.createTopic('dense', { partitions: 3 })
    const p = store.twain.producer('dense')
    const results = await Promise.all(range(0, 60).map((k) => p.send(k, `v${k}`)))
    const perPartition = new Map<number, number[]>()
    for (const r of results) perPartition.set(r.partition, [...(perPartition.get(r.partition) ?? []), r.offset])
    expect([...perPartition.keys()].sort()).toEqual([0, 1, 2]) // 60 keys spread over all 3
    for (const offs of perPartition.values()) expect([...offs].sort((a, b) => a - b)).toEqual(range(0, offs.length))
    // sends of one tick keep send order within a partition
    for (const offs of perPartition.values()) expect(offs).toEqual(range(0, offs.length))
    const info = await store.twain.describeTopic('dense')
    expect(info.offsets).toEqual(
      [0, 1, 2].map((partition) => ({ partition, start: 0, end: perPartition.get(partition)?.length })),
    )
    expect(await store.twain.length('dense')).toBe(60)
    // history agrees with what the sends reported
    const hist = await collect(store.twain.history('dense'))
    for (const [part, offs] of byPartition(hist)) expect(offs).toEqual(range(0, perPartition.get(part)?.length ?? -1))
    for (const [i, r] of results.entries()) {
      const m = hist.find((h) => h.partition === r.partition && h.offset === r.offset)
      expect(m?.value).toBe(`v${i}`)
    }
  })

  it('continues offsets across sequential sends, sendBatch and several producers', async () => {
    await store.twain.createTopic('seq', { partitions: 2 })
    const a = store.twain.producer('seq')
    const b = store.twain.producer('seq')
    expect(await a.send(1, 'x', { partition: 1 })).toEqual({ partition: 1, offset: 0 })
    expect(await b.sendBatch([1, 2, 3].map((k) => ({ key: k, value: k, partition: 1 })))).toEqual(
      [1, 2, 3].map((offset) => ({ partition: 1, offset })),
    )
    expect(await a.send(1, 'y', { partition: 1 })).toEqual({ partition: 1, offset: 4 })
    expect(await b.send(1, 'z', { partition: 0 })).toEqual({ partition: 0, offset: 0 })
    expect((await store.twain.describeTopic('seq')).offsets).toEqual([
      { partition: 0, start: 0, end: 1 },
      { partition: 1, start: 0, end: 5 },
    ])
  })

  it('another instance on the same directory continues the same dense offsets', async () => {
    await store.twain.createTopic('two')
    const other = await open(store.dir, { clientId: 'other' })
    try {
      const a = store.twain.producer('two')
      const b = other.producer('two')
      const rs = await Promise.all([a.send(1, 'a1'), b.send(1, 'b1'), a.send(1, 'a2'), b.send(1, 'b2')])
      expect(rs.map((r) => r.offset).sort()).toEqual([0, 1, 2, 3])
      expect(await other.length('two')).toBe(4)
      const hist = await collect(other.history('two'))
      expect(hist.map((m) => m.offset)).toEqual([0, 1, 2, 3])
      expect(new Set(hist.map((m) => m.producerId))).toEqual(new Set([store.twain.clientId, 'other']))
    } finally {
      await other.close()
    }
  })

  describe('trim', () => {
    beforeEach(async () => {
      await store.twain.createTopic('tr', { partitions: 2 })
      const p = store.twain.producer('tr')
      await p.sendBatch(range(0, 10).map((i) => ({ key: i, value: i, partition: 0 })))
      await p.sendBatch(range(0, 4).map((i) => ({ key: i, value: 100 + i, partition: 1 })))
    })

    it('trim({ maxMessages }) keeps the newest n per partition and returns the removed count', async () => {
      expect(await store.twain.trim('tr', { maxMessages: 3 })).toBe(7 + 1)
      expect(await store.twain.length('tr')).toBe(6)
      expect((await store.twain.describeTopic('tr')).offsets).toEqual([
        { partition: 0, start: 7, end: 10 },
        { partition: 1, start: 1, end: 4 },
      ])
      const h0 = await collect(store.twain.history('tr', { partition: 0 }))
      expect(h0.map((m) => [m.offset, m.value])).toEqual([
        [7, 7],
        [8, 8],
        [9, 9],
      ])
      expect((await collect(store.twain.history('tr', { partition: 1 }))).map((m) => m.offset)).toEqual([1, 2, 3])
      // trimming again to the same size removes nothing
      expect(await store.twain.trim('tr', { maxMessages: 3 })).toBe(0)
    })

    it('trim({ maxMessages: 0 }) empties every partition but later sends continue the offsets', async () => {
      expect(await store.twain.trim('tr', { maxMessages: 0 })).toBe(14)
      expect(await store.twain.length('tr')).toBe(0)
      expect(await collect(store.twain.history('tr'))).toEqual([])
      expect(await store.twain.producer('tr').send(1, 'next', { partition: 0 })).toEqual({ partition: 0, offset: 10 })
      expect((await collect(store.twain.history('tr'))).map((m) => m.offset)).toEqual([10])
    })

    it('trim({ before }) removes offsets below the given one per partition and returns the count', async () => {
      expect(await store.twain.trim('tr', { before: { 0: 4 } })).toBe(4)
      expect((await store.twain.describeTopic('tr')).offsets[0]).toEqual({ partition: 0, start: 4, end: 10 })
      expect((await store.twain.describeTopic('tr')).offsets[1]).toEqual({ partition: 1, start: 0, end: 4 })
      const h = await collect(store.twain.history('tr', { partition: 0 }))
      expect(h.map((m) => m.offset)).toEqual(range(4, 10))
      expect(h[0]?.value).toBe(4)
      // below the current start: nothing to remove
      expect(await store.twain.trim('tr', { before: { 0: 2 } })).toBe(0)
      // beyond the end: clamps to the end
      expect(await store.twain.trim('tr', { before: { 0: 50, 1: 2 } })).toBe(6 + 2)
      expect((await store.twain.describeTopic('tr')).offsets).toEqual([
        { partition: 0, start: 10, end: 10 },
        { partition: 1, start: 2, end: 4 },
      ])
      expect(await store.twain.length('tr')).toBe(2)
    })

    it('tail from start and from an offset below the start both begin at the new start after a trim', async () => {
      await store.twain.trim('tr', { before: { 0: 6 } })
      const fromStart = await takeN(store.twain.tail('tr', { from: 'start', partitions: [0] }), 4)
      expect(fromStart.map((m) => m.offset)).toEqual([6, 7, 8, 9])
      const fromOld = await takeN(store.twain.tail('tr', { from: { offset: 2 }, partitions: [0] }), 1)
      expect(fromOld.map((m) => m.offset)).toEqual([6])
      const hist = await collect(store.twain.history('tr', { partition: 0, from: 1 }))
      expect(hist[0]?.offset).toBe(6)
    })

    it('rejects a partition that does not exist and bad arguments with InvalidArgumentError', async () => {
      await expect(store.twain.trim('tr', { before: { 5: 1 } })).rejects.toBeInstanceOf(InvalidArgumentError)
      await expect(store.twain.trim('tr', { before: { 0: -1 } })).rejects.toBeInstanceOf(InvalidArgumentError)
      await expect(store.twain.trim('tr', { maxMessages: -1 })).rejects.toBeInstanceOf(InvalidArgumentError)
      await expect(store.twain.trim('tr', { maxMessages: 1.5 })).rejects.toBeInstanceOf(InvalidArgumentError)
      await expect(store.twain.trim('tr', {} as never)).rejects.toBeInstanceOf(InvalidArgumentError)
      expect(await store.twain.length('tr')).toBe(14)
    })
  })
})

describe('segments (tiny segmentBytes)', () => {
  const store = useFileStore({ segmentBytes: 1024 })

  it('rolls into many segments while offsets stay dense and history/tail read across all of them', async () => {
    await store.twain.createTopic('roll', { partitions: 2 })
    const p = store.twain.producer('roll')
    const value = (i: number) => `message-${i}-${'x'.repeat(60)}`
    // one frame per send (awaited), some batches of several
    for (let i = 0; i < 150; i++) await p.send(i, value(i), { partition: 0 })
    await p.sendBatch(range(150, 200).map((i) => ({ key: i, value: value(i), partition: 0 })))
    await p.sendBatch(range(0, 20).map((i) => ({ key: i, value: value(i), partition: 1 })))
    expect(segmentFiles(store.dir, 'roll', 0).length).toBeGreaterThan(10)
    expect((await store.twain.describeTopic('roll')).offsets).toEqual([
      { partition: 0, start: 0, end: 200 },
      { partition: 1, start: 0, end: 20 },
    ])
    const hist = await collect(store.twain.history('roll', { partition: 0 }))
    expect(hist.map((m) => m.offset)).toEqual(range(0, 200))
    expect(hist.map((m) => m.value)).toEqual(range(0, 200).map(value))
    // seek into the middle of a middle segment
    const mid = await collect(store.twain.history('roll', { partition: 0, from: 123, to: 131 }))
    expect(mid.map((m) => m.offset)).toEqual(range(123, 131))
    // reverse across segment boundaries
    const rev = await collect(store.twain.history('roll', { partition: 0, reverse: true, limit: 30 }))
    expect(rev.map((m) => m.offset)).toEqual(range(170, 200).reverse())
    // a tail from the start reads all of them, then follows live appends through further rolls
    const tail = store.twain.tail('roll', { from: 'start', partitions: [0] })
    const got = takeN(tail, 260, 10_000)
    for (let i = 200; i < 260; i++) await p.send(i, value(i), { partition: 0 })
    expect((await got).map((m) => m.offset)).toEqual(range(0, 260))
    const fromOffset = await takeN(store.twain.tail('roll', { from: { offset: 240 }, partitions: [0] }), 20)
    expect(fromOffset.map((m) => m.offset)).toEqual(range(240, 260))
  })

  it('a message larger than segmentBytes gets a segment of its own and reads back', async () => {
    await store.twain.createTopic('big')
    const p = store.twain.producer('big')
    await p.send(1, 'small')
    const big = 'B'.repeat(5000)
    await p.send(2, big)
    await p.send(3, 'after')
    expect(
      (await collect(store.twain.history('big'))).map((m) => [
        m.offset,
        typeof m.value === 'string' ? m.value.length : -1,
      ]),
    ).toEqual([
      [0, 5],
      [1, 5000],
      [2, 5],
    ])
  })

  it('trim across segments deletes whole segments below the new start', async () => {
    await store.twain.createTopic('trs')
    const p = store.twain.producer('trs')
    for (let i = 0; i < 100; i++) await p.send(i, `v-${i}-${'y'.repeat(60)}`)
    const before = segmentFiles(store.dir, 'trs', 0).length
    expect(await store.twain.trim('trs', { maxMessages: 10 })).toBe(90)
    expect(segmentFiles(store.dir, 'trs', 0).length).toBeLessThan(before)
    expect((await collect(store.twain.history('trs'))).map((m) => m.offset)).toEqual(range(90, 100))
    expect(await p.send(1, 'more')).toEqual({ partition: 0, offset: 100 })
  })

  it('retention { maxMessages } deletes old segments after rolls, keeping at least maxMessages', async () => {
    await store.twain.createTopic('ret', { retention: { maxMessages: 40 } })
    const p = store.twain.producer('ret')
    for (let i = 0; i < 300; i++) await p.send(i, `r-${i}-${'z'.repeat(60)}`)
    // Retention runs in the background after each roll: wait for it to have caught up with the rolls
    // (the start moved and old segments are gone), not just for its first pass.
    await until(
      async () =>
        (await store.twain.describeTopic('ret')).offsets[0]!.start > 0 && segmentFiles(store.dir, 'ret', 0).length < 20,
      5000,
      'retention to move the start and remove old segments',
    )
    await p.send(300, 'one more to trigger a last retention pass if a roll happens')
    // That send may roll a segment: wait for retention to catch up with it too.
    await until(() => segmentFiles(store.dir, 'ret', 0).length < 20, 5000, 'retention to catch up with the last roll')
    const info = (await store.twain.describeTopic('ret')).offsets[0]!
    expect(info.end).toBe(301)
    expect(info.end - info.start).toBeGreaterThanOrEqual(40)
    const files = segmentFiles(store.dir, 'ret', 0)
    expect(files.length).toBeLessThan(20)
    expect(Number(files[0]?.slice(0, 20))).toBeLessThanOrEqual(info.start)
    const hist = await collect(store.twain.history('ret'))
    // history starts at the retained start (which only moves forward) and is dense to the end
    expect(hist[0]!.offset).toBeGreaterThanOrEqual(info.start)
    expect(hist[0]!.offset).toBeLessThanOrEqual((await store.twain.describeTopic('ret')).offsets[0]!.start)
    expect(hist.length).toBeGreaterThanOrEqual(40)
    expect(hist.map((m) => m.offset)).toEqual(range(hist[0]!.offset, 301))
  })
})
