/**
 * Backend contract, trimming, retention and time seeks: trimBefore's counts and the start it
 * leaves, applyRetention with `maxMessages`, and offsetForTime. Where an implementation has no
 * trimming or retention (twainmq-v1), its documented refusal is asserted instead.
 */
import { describe, expect, it } from 'vitest'
import type { Backend } from '../../src/backends/backend.js'
import { InvalidArgumentError, TopicNotFoundError } from '../../src/core/errors.js'
import { readAll, records, texts, topicMeta } from './fixture.js'
import { kinds, perTest } from './kinds.js'

const pad = (s: string) => s.padEnd(60, '.')

/** `n` appends of one ~70-byte record each (several segments at `segmentBytes` 1024). */
async function appendOneByOne(b: Backend, topic: string, n: number): Promise<void> {
  const meta = topicMeta(topic)
  for (let i = 0; i < n; i++) await b.append(topic, 0, records(meta, [pad(`r${i}`)]), 'p')
}

/** Start and end of partition 0. */
async function start(b: Backend, topic: string): Promise<{ start: number; end: number }> {
  const o = (await b.offsets(topic))[0] as { start: number; end: number }
  return { start: o.start, end: o.end }
}

describe.each(kinds())('$name: trim, retention, time', (kind) => {
  kind.hooks()
  const ctx = perTest(kind)

  it(
    kind.caps.trim === 'exact'
      ? 'trimBefore removes exactly the offsets below `before`, clamped to the retained range'
      : 'trimBefore is refused with InvalidArgumentError',
    async () => {
      const b = await ctx.fresh()
      const meta = topicMeta('t')
      await b.createTopic(meta)
      await b.append('t', 0, texts(meta, 'v', 10), 'p')
      await b.append('t', 0, texts(meta, 'w', 10), 'p')
      if (kind.caps.trim === 'refused') {
        const e = await b.trimBefore('t', 0, 7).catch((err: unknown) => err)
        expect(e).toBeInstanceOf(InvalidArgumentError)
        expect((e as Error).message).toContain('"t"')
        expect(await b.offsets('t')).toEqual([{ partition: 0, start: 0, end: 20 }])
        expect(await readAll(b, 't')).toHaveLength(20)
        return
      }
      expect(await b.trimBefore('t', 0, 7)).toBe(7)
      expect(await b.offsets('t')).toEqual([{ partition: 0, start: 7, end: 20 }])
      expect(await b.trimBefore('t', 0, 7)).toBe(0) // again: nothing left below 7
      expect(await b.trimBefore('t', 0, 3)).toBe(0) // below the start
      expect((await readAll(b, 't')).map((m) => m.offset)[0]).toBe(7)
      expect(await b.trimBefore('t', 0, 100)).toBe(13) // beyond the end: clamped to the end
      expect(await b.offsets('t')).toEqual([{ partition: 0, start: 20, end: 20 }])
      expect(await readAll(b, 't')).toEqual([])
      expect(await b.append('t', 0, texts(meta, 'x', 1), 'p')).toBe(20) // offsets are never reused
      expect(await (await ctx.open()).offsets('t')).toEqual([{ partition: 0, start: 20, end: 21 }])
    },
  )

  if (kind.caps.trim === 'exact') {
    it('trimBefore across several segments is exact too', async () => {
      const b = await ctx.fresh({ segmentBytes: 1024 })
      await b.createTopic(topicMeta('t'))
      await appendOneByOne(b, 't', 60)
      expect(await b.trimBefore('t', 0, 33)).toBe(33)
      expect(await b.offsets('t')).toEqual([{ partition: 0, start: 33, end: 60 }])
      const read = await readAll(b, 't')
      expect(read.map((m) => m.offset)).toEqual(Array.from({ length: 27 }, (_, i) => 33 + i))
      expect(read[0]?.value).toBe(pad('r33'))
      expect(await b.trimBefore('t', 0, 50)).toBe(17)
      expect(await b.trimBefore('t', 0, 50)).toBe(0)
    })
  }

  it('trimBefore of a partition that was never written removes nothing', async () => {
    const b = await ctx.fresh()
    await b.createTopic(topicMeta('t', { partitions: 2 }))
    if (kind.caps.trim === 'refused') await expect(b.trimBefore('t', 1, 5)).rejects.toBeInstanceOf(InvalidArgumentError)
    else expect(await b.trimBefore('t', 1, 5)).toBe(0)
    expect((await b.offsets('t'))[1]).toEqual({ partition: 1, start: 0, end: 0 })
  })

  if (kind.caps.retention === 'none') {
    it('retention limits are refused at createTopic (InvalidArgumentError); applyRetention removes nothing', async () => {
      const b = await ctx.fresh()
      await expect(b.createTopic(topicMeta('t', { retention: { maxMessages: 10 } }))).rejects.toBeInstanceOf(
        InvalidArgumentError,
      )
      await expect(b.getTopic('t')).rejects.toBeInstanceOf(TopicNotFoundError)
      await b.createTopic(topicMeta('t'))
      await appendOneByOne(b, 't', 25)
      expect(await b.applyRetention('t')).toBe(0)
      expect(await b.offsets('t')).toEqual([{ partition: 0, start: 0, end: 25 }])
    })
  }

  if (kind.caps.retention === 'exact') {
    it('applyRetention with maxMessages keeps exactly the newest maxMessages', async () => {
      const b = await ctx.fresh()
      const meta = topicMeta('t', { retention: { maxMessages: 10 } })
      await b.createTopic(meta)
      for (let i = 0; i < 5; i++) await b.append('t', 0, texts(meta, `b${i}.`, 5), 'p')
      const before = await start(b, 't')
      const removed = await b.applyRetention('t')
      const after = await start(b, 't')
      expect(after).toEqual({ start: 15, end: 25 })
      expect(removed).toBe(after.start - before.start)
      expect(await b.applyRetention('t')).toBe(0)
      expect((await readAll(b, 't')).map((m) => m.value)[0]).toBe('b3.0')
    })
  }

  if (kind.caps.retention === 'segments') {
    it('applyRetention with maxMessages deletes whole old segments: at least maxMessages stay', async () => {
      const b = await ctx.fresh({ segmentBytes: 1024 })
      await b.createTopic(topicMeta('t', { retention: { maxMessages: 10 } }))
      await appendOneByOne(b, 't', 60)
      const before = await start(b, 't')
      const removed = await b.applyRetention('t')
      const after = await start(b, 't')
      expect(after.end).toBe(60)
      expect(after.end - after.start).toBeGreaterThanOrEqual(10)
      expect(after.start).toBeGreaterThan(0) // 60 records span many 1 KiB segments: old ones went
      expect(after.end - after.start).toBeLessThan(10 + 1024 / 60) // no more than one segment's worth beyond the limit
      // Appends also apply retention after a segment roll (in the background), so `removed` may be
      // less than what went since `before`; never more.
      expect(removed).toBeGreaterThanOrEqual(0)
      expect(removed).toBeLessThanOrEqual(after.start - before.start)
      expect(await b.applyRetention('t')).toBe(0)
      expect((await readAll(b, 't'))[0]?.offset).toBe(after.start)
    })
  }

  if (kind.caps.retention === 'segments') {
    it('applyRetention never deletes the active segment: one segment stays whole', async () => {
      const b = await ctx.fresh()
      await b.createTopic(topicMeta('t', { retention: { maxMessages: 10 } }))
      await appendOneByOne(b, 't', 25)
      expect(await b.applyRetention('t')).toBe(0)
      expect(await b.offsets('t')).toEqual([{ partition: 0, start: 0, end: 25 }])
    })
  }

  it('offsetForTime: exact hits, between, before the first and after the last (= end)', async () => {
    const b = await ctx.fresh()
    const meta = topicMeta('t', { partitions: 2 })
    await b.createTopic(meta)
    const t0 = 1_700_000_000_000
    // Offsets 2i and 2i+1 are stamped t0 + 1000 i.
    for (let i = 0; i < 5; i++) await b.append('t', 0, texts(meta, `s${i}.`, 2, t0 + 1000 * i), 'p')
    const at = (time: number) => b.offsetForTime('t', 0, time)
    expect(await at(t0)).toBe(0)
    expect(await at(t0 + 2000)).toBe(4)
    expect(await at(t0 + 4000)).toBe(8)
    expect(await at(t0 + 1)).toBe(2)
    expect(await at(t0 + 2500)).toBe(6)
    expect(await at(t0 + 3999)).toBe(8)
    expect(await at(t0 - 60_000)).toBe(0)
    expect(await at(0)).toBe(0)
    expect(await at(t0 + 4001)).toBe(10)
    expect(await at(t0 + 86_400_000)).toBe(10)
    expect(await b.offsetForTime('t', 1, t0)).toBe(0) // an empty partition: its end
    expect(await (await ctx.open()).offsetForTime('t', 0, t0 + 3000)).toBe(6)
  })

  if (kind.caps.trim === 'exact') {
    it('offsetForTime after a trim never answers below the start', async () => {
      const b = await ctx.fresh()
      const meta = topicMeta('t')
      await b.createTopic(meta)
      const t0 = 1_700_000_000_000
      for (let i = 0; i < 5; i++) await b.append('t', 0, texts(meta, `s${i}.`, 2, t0 + 1000 * i), 'p')
      await b.trimBefore('t', 0, 5)
      expect(await b.offsetForTime('t', 0, t0)).toBe(5)
      expect(await b.offsetForTime('t', 0, t0 + 2000)).toBe(5)
      expect(await b.offsetForTime('t', 0, t0 + 3000)).toBe(6)
      expect(await b.offsetForTime('t', 0, t0 + 9000)).toBe(10)
    })
  }
})
