/**
 * Backend contract, PartitionReader: bounded reads in offset order, never blocking at the end,
 * seeks, reads below the partition's start, `next`, messages built by a factory, and close.
 */
import { describe, expect, it } from 'vitest'
import type { Backend } from '../../src/backends/backend.js'
import type { MessageFactory } from '../../src/backends/record.js'
import { InvalidArgumentError } from '../../src/core/errors.js'
import { texts, topicMeta, within } from './fixture.js'
import { kinds, perTest } from './kinds.js'

/** A topic `t` with 25 records in batches of 10, 1, 14 (values v0..v24). */
async function written(b: Backend): Promise<void> {
  const meta = topicMeta('t')
  await b.createTopic(meta)
  const all = texts(meta, 'v', 25)
  await b.append('t', 0, all.slice(0, 10), 'p')
  await b.append('t', 0, all.slice(10, 11), 'p')
  await b.append('t', 0, all.slice(11), 'p')
}

describe.each(kinds())('$name: reader', (kind) => {
  kind.hooks()
  const ctx = perTest(kind)

  it('read(max) returns at most max messages, in offset order, across batch boundaries; next follows', async () => {
    const b = await ctx.fresh()
    await written(b)
    const r = await b.openReader('t', 0, 0)
    expect(r.topic).toBe('t')
    expect(r.partition).toBe(0)
    expect(r.next).toBe(0)
    const seen: number[] = []
    for (let i = 0; i < 30 && seen.length < 25; i++) {
      const got = await r.read(7)
      expect(got.length).toBeGreaterThan(0)
      expect(got.length).toBeLessThanOrEqual(7)
      for (const m of got) expect(m.value).toBe(`v${m.offset}`)
      seen.push(...got.map((m) => m.offset))
      expect(r.next).toBe((got[got.length - 1]?.offset as number) + 1)
    }
    expect(seen).toEqual(Array.from({ length: 25 }, (_, i) => i))
    expect(await r.read(1)).toEqual([])
    expect(r.next).toBe(25)
    await r.close()
  })

  it('read at the end returns [] at once (no blocking), and the next append is read after it', async () => {
    const b = await ctx.fresh()
    await written(b)
    const r = await b.openReader('t', 0, 25)
    expect(await within(r.read(10), 1000, 'read at the end')).toEqual([])
    expect(await within(r.read(10), 1000, 'second read at the end')).toEqual([])
    const empty = await ctx.open()
    await empty.createTopic(topicMeta('e'))
    const re = await empty.openReader('e', 0, 0)
    expect(await within(re.read(10), 1000, 'read of an empty partition')).toEqual([])
    await b.append('t', 0, texts(topicMeta('t'), 'late', 1), 'p')
    const got = await within(r.read(10), 1000, 'read after an append')
    expect(got.map((m) => [m.offset, m.value])).toEqual([[25, 'late0']])
    await Promise.all([r.close(), re.close()])
  })

  it('seek moves forwards and backwards, also into the middle of a batch', async () => {
    const b = await ctx.fresh()
    await written(b)
    const r = await b.openReader('t', 0, 0)
    await r.read(3)
    r.seek(20)
    expect(r.next).toBe(20)
    expect((await r.read(2)).map((m) => m.offset)).toEqual([20, 21])
    r.seek(4)
    expect(r.next).toBe(4)
    expect((await r.read(3)).map((m) => m.offset)).toEqual([4, 5, 6])
    r.seek(10)
    expect((await r.read(2)).map((m) => m.offset)).toEqual([10, 11])
    r.seek(0)
    expect((await r.read(1)).map((m) => m.value)).toEqual(['v0'])
    r.seek(25)
    expect(await r.read(5)).toEqual([])
    await r.close()
  })

  it('openReader at an offset in the middle starts there', async () => {
    const b = await ctx.fresh()
    await written(b)
    const r = await b.openReader('t', 0, 13)
    expect(r.next).toBe(13)
    expect((await r.read(2)).map((m) => m.value)).toEqual(['v13', 'v14'])
    await r.close()
  })

  it('a reader opened or seeked below the start (after trimBefore) resumes at the start', async () => {
    const b = await ctx.fresh()
    await written(b)
    if (kind.caps.trim === 'refused') {
      await expect(b.trimBefore('t', 0, 12)).rejects.toBeInstanceOf(InvalidArgumentError)
      const r = await b.openReader('t', 0, 0)
      expect((await r.read(1)).map((m) => m.offset)).toEqual([0])
      await r.close()
      return
    }
    expect(await b.trimBefore('t', 0, 12)).toBe(12)
    const r = await b.openReader('t', 0, 5)
    expect((await r.read(1)).map((m) => m.offset)).toEqual([12])
    r.seek(3)
    expect((await r.read(2)).map((m) => m.offset)).toEqual([12, 13])
    const other = await (await ctx.open()).openReader('t', 0, 0)
    expect((await other.read(1)).map((m) => m.offset)).toEqual([12])
    await Promise.all([r.close(), other.close()])
  })

  it('a reader already reading when the partition is trimmed past it resumes at the new start', async () => {
    const b = await ctx.fresh()
    await written(b)
    const early = await b.openReader('t', 0, 0)
    expect((await early.read(2)).map((m) => m.offset)).toEqual([0, 1])
    if (kind.caps.trim === 'refused') {
      await expect(b.trimBefore('t', 0, 12)).rejects.toBeInstanceOf(InvalidArgumentError)
      expect((await early.read(1)).map((m) => m.offset)).toEqual([2])
    } else {
      expect(await b.trimBefore('t', 0, 12)).toBe(12)
      expect((await early.read(3)).map((m) => m.offset)).toEqual([12, 13, 14])
    }
    await early.close()
  })

  it('read(max, make) builds every message of a read with the factory or none (plain ones), with the same fields', async () => {
    const b = await ctx.fresh()
    await written(b)
    class Made {}
    const make: MessageFactory = {
      message: (topic, partition, offset, key, timestamp, value, headers, producerId, type) =>
        Object.assign(new Made(), {
          topic,
          partition,
          offset,
          key,
          timestamp,
          value,
          headers,
          producerId,
          ...(type === undefined ? {} : { type }),
        }),
    }
    const plain = await (await b.openReader('t', 0, 3)).read(12)
    const r = await b.openReader('t', 0, 3)
    const got = [...(await r.read(5, make)), ...(await r.read(7, make))]
    expect(got).toHaveLength(12)
    const made = got.filter((m) => m instanceof Made).length
    expect(made === 0 || made === 12, `${made} of 12 made by the factory`).toBe(true)
    expect(got.map((m) => ({ ...m }))).toEqual(plain.map((m) => ({ ...m })))
    await r.close()
  })

  it('close is idempotent and a closed reader returns []', async () => {
    const b = await ctx.fresh()
    await written(b)
    const r = await b.openReader('t', 0, 0)
    expect(await r.read(2)).toHaveLength(2)
    await r.close()
    await r.close()
    expect(await within(r.read(10), 1000, 'read of a closed reader')).toEqual([])
    r.seek(0)
    expect(await r.read(10)).toEqual([])
  })

  it('closing the store closes the readers still open', async () => {
    const b = await ctx.fresh()
    await written(b)
    const [open, closed] = [await b.openReader('t', 0, 0), await b.openReader('t', 0, 0)]
    await closed.close()
    await b.close()
    expect(await within(open.read(10), 1000, 'read of a reader of a closed store')).toEqual([])
  })

  it('readers are independent: two readers of one partition on two instances', async () => {
    const b1 = await ctx.fresh()
    await written(b1)
    const b2 = await ctx.open()
    const r1 = await b1.openReader('t', 0, 0)
    const r2 = await b2.openReader('t', 0, 20)
    expect((await r1.read(2)).map((m) => m.offset)).toEqual([0, 1])
    expect((await r2.read(2)).map((m) => m.offset)).toEqual([20, 21])
    expect((await r1.read(1)).map((m) => m.offset)).toEqual([2])
    await Promise.all([r1.close(), r2.close()])
  })
  it('a read after new appends returns them, also after full reads that let the reader read ahead', async () => {
    const b = await ctx.fresh()
    const meta = topicMeta('t')
    await b.createTopic(meta)
    await b.append('t', 0, texts(meta, 'a', 6), 'p')
    const r = await b.openReader('t', 0, 0)
    // Three full reads of 2 at the end of the data (a backlog reader may fetch the next 2 ahead).
    for (const at of [0, 2, 4]) expect((await r.read(2)).map((m) => m.offset)).toEqual([at, at + 1])
    await b.append('t', 0, texts(meta, 'b', 2), 'p')
    expect(
      (await r.read(2)).map((m) => m.value),
      'no stale read-ahead',
    ).toEqual(['b0', 'b1'])
    await b.append('t', 0, texts(meta, 'c', 3), 'p')
    expect((await r.read(2)).map((m) => m.value)).toEqual(['c0', 'c1'])
    expect((await r.read(2)).map((m) => m.value)).toEqual(['c2'])
    await r.close()
  })
})
