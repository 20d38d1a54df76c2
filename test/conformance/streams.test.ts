// Conformance: produce, tail and history (with their options), as AsyncIterables and Observables — on both backends.
import { firstValueFrom, from as rxFrom, take, toArray } from 'rxjs'
import { describe, expect, it } from 'vitest'
import { InvalidArgumentError, type Message, type Twain } from '../../src/index.js'
import { collect, takeN } from '../unit/helpers.js'
import { backends, perTest } from './backends.js'
import { sleep, until } from '../helpers/wait.js'

const po = (ms: Message[]) => ms.map((m) => `${m.partition}:${m.offset}`)

async function fill(twain: Twain, topic: string, partition: number, n: number, prefix = `p${partition}-`) {
  return twain
    .producer<string>(topic)
    .sendBatch(Array.from({ length: n }, (_, i) => ({ key: i, value: `${prefix}${i}`, partition })))
}

describe.each(backends())('tail and history on $name', (kind) => {
  kind.hooks()
  const ctx = perTest(kind)

  it("tail from 'end' (default) delivers what is sent after tail() was called, even before iterating", async () => {
    await ctx.twain.createTopic('t', { partitions: 2 })
    await fill(ctx.twain, 't', 0, 3)
    const stream = ctx.twain.tail<string>('t')
    await fill(ctx.twain, 't', 0, 1, 'new0-')
    await fill(ctx.twain, 't', 1, 1, 'new1-')
    const got = await takeN(stream, 2)
    expect(got.map((m) => m.value).sort()).toEqual(['new0-0', 'new1-0'])
    expect(po(got).sort()).toEqual(['0:3', '1:0'])
  })

  it("tail from 'end' is fixed when tail() is called, also for a send issued in the same tick after a quiet second", async () => {
    const other = await ctx.open()
    await other.createTopic('t')
    const p = ctx.twain.producer<string>('t')
    await p.send(1, 'before')
    await sleep(1100) // cached configurations go stale
    const stream = ctx.twain.tail<string>('t')
    const sent = p.send(2, 'right-after')
    const [m] = await takeN(stream, 1)
    expect([m?.value, m?.offset]).toEqual(['right-after', (await sent).offset])
  })

  it('a waiting tail wakes up for messages from another instance (cross-process path)', async () => {
    await ctx.twain.createTopic('t')
    const other = await ctx.open({ clientId: 'other' })
    const before = await kind.waitingReads()
    const got = takeN(ctx.twain.tail<string>('t'), 3)
    await until(async () => (await kind.waitingReads()) > before, 5000, 'the tail to wait for data')
    const p = other.producer<string>('t')
    await p.send(1, 'a')
    await sleep(20) // a second wake-up: the next batch comes after the tail has (most likely) gone back to waiting
    await p.sendBatch([
      { key: 2, value: 'b' },
      { key: 3, value: 'c' },
    ])
    expect((await got).map((m) => [m.offset, m.value, m.producerId])).toEqual([
      [0, 'a', 'other'],
      [1, 'b', 'other'],
      [2, 'c', 'other'],
    ])
  })

  it("tail from 'start', { offset }, { offset: { p } } and { time }", async () => {
    await ctx.twain.createTopic('t', { partitions: 2 })
    await fill(ctx.twain, 't', 0, 4)
    await fill(ctx.twain, 't', 1, 2)
    expect(po(await takeN(ctx.twain.tail('t', { from: 'start' }), 6)).sort()).toEqual([
      '0:0',
      '0:1',
      '0:2',
      '0:3',
      '1:0',
      '1:1',
    ])
    expect(po(await takeN(ctx.twain.tail('t', { from: { offset: 1 } }), 4)).sort()).toEqual([
      '0:1',
      '0:2',
      '0:3',
      '1:1',
    ])
    const s = ctx.twain.tail('t', { from: { offset: { 0: 2 } } })
    await fill(ctx.twain, 't', 1, 1, 'late-')
    expect(po(await takeN(s, 3)).sort()).toEqual(['0:2', '0:3', '1:2'])
    await sleep(15) // time is the subject: messages on both sides of t have other timestamps
    const t = Date.now()
    await sleep(15)
    await fill(ctx.twain, 't', 1, 1, 'after-')
    const byTime = await takeN(ctx.twain.tail<string>('t', { from: { time: t } }), 1)
    expect(byTime.map((m) => [m.partition, m.offset, m.value])).toEqual([[1, 3, 'after-0']])
  })

  it('tail of some partitions, of several topics, and skipOwn', async () => {
    await ctx.twain.createTopic('a', { partitions: 3 })
    await ctx.twain.createTopic('b')
    const other = await ctx.open({ clientId: 'someone-else' })
    const part = ctx.twain.tail<string>('a', { partitions: [2], from: 'start' })
    const multi = ctx.twain.tail<string>(['a', 'b'], { from: 'start', skipOwn: true })
    await fill(ctx.twain, 'a', 0, 1, 'mine-')
    await fill(ctx.twain, 'a', 2, 2, 'mine2-')
    await other.producer<string>('b').send(1, 'theirs-b', { partition: 0 })
    await other.producer<string>('a').send(1, 'theirs-a', { partition: 1 })
    expect((await takeN(part, 2)).map((m) => m.value)).toEqual(['mine2-0', 'mine2-1'])
    const got = await takeN(multi, 2)
    expect(got.map((m) => `${m.topic}:${m.value}`).sort()).toEqual(['a:theirs-a', 'b:theirs-b'])
    await expect(takeN(ctx.twain.tail('a', { partitions: [3] }), 1)).rejects.toBeInstanceOf(InvalidArgumentError)
  })

  it('a tail delivers every message once, in order per partition, under load', async () => {
    await ctx.twain.createTopic('t', { partitions: 3 })
    const reading = takeN(ctx.twain.tail<number>('t', { from: 'start' }), 3000, 20_000)
    const p = ctx.twain.producer<number>('t')
    for (let i = 0; i < 30; i++) {
      await Promise.all(Array.from({ length: 100 }, (_, j) => p.send(i * 100 + j, i * 100 + j)))
      if (i % 10 === 0) await sleep(5) // let the tail read between bursts: load, not one batch
    }
    const got = await reading
    expect(new Set(got.map((m) => m.value)).size).toBe(3000)
    for (const part of [0, 1, 2]) {
      const offs = got.filter((m) => m.partition === part).map((m) => m.offset)
      expect(offs).toEqual(offs.map((_, i) => i))
    }
  })

  it('history: all partitions in order, from/to, from time, limit', async () => {
    await ctx.twain.createTopic('t', { partitions: 2 })
    await fill(ctx.twain, 't', 0, 5)
    await sleep(15) // time is the subject: messages on both sides of t have other timestamps
    const t = Date.now()
    await sleep(15)
    await fill(ctx.twain, 't', 1, 3)
    expect(po(await collect(ctx.twain.history('t')))).toEqual(['0:0', '0:1', '0:2', '0:3', '0:4', '1:0', '1:1', '1:2'])
    expect(po(await collect(ctx.twain.history('t', { partition: 0, from: 1, to: 3 })))).toEqual(['0:1', '0:2'])
    expect(po(await collect(ctx.twain.history('t', { from: { time: t } })))).toEqual(['1:0', '1:1', '1:2'])
    expect(po(await collect(ctx.twain.history('t', { limit: 3 })))).toEqual(['0:0', '0:1', '0:2'])
    expect(await collect(ctx.twain.history('t', { partition: 0, from: 10 }))).toEqual([])
    await expect(collect(ctx.twain.history('t', { partition: 2 }))).rejects.toBeInstanceOf(InvalidArgumentError)
  })

  it('history reverse + limit gives the newest first (one partition and across partitions)', async () => {
    await ctx.twain.createTopic('t', { partitions: 2 })
    const p = ctx.twain.producer<string>('t')
    for (let i = 0; i < 6; i++) {
      await p.send(i, `m${i}`, { partition: i % 2 })
      await sleep(2) // distinct timestamps
    }
    await fill(ctx.twain, 't', 0, 600, 'bulk-')
    expect(
      (await collect(ctx.twain.history<string>('t', { partition: 1, reverse: true, limit: 2 }))).map((m) => m.value),
    ).toEqual(['m5', 'm3'])
    const newest = await collect(ctx.twain.history<string>('t', { reverse: true, limit: 3 }))
    expect(newest.map((m) => m.value)).toEqual(['bulk-599', 'bulk-598', 'bulk-597'])
    const all = await collect(ctx.twain.history<string>('t', { partition: 0, reverse: true }))
    expect(all.map((m) => m.offset)).toEqual(Array.from({ length: 603 }, (_, i) => 602 - i))
  })

  it('history after a trim starts at the retained start', async () => {
    await ctx.twain.createTopic('t')
    await fill(ctx.twain, 't', 0, 10)
    await ctx.twain.trim('t', { before: { 0: 6 } })
    expect(po(await collect(ctx.twain.history('t')))).toEqual(['0:6', '0:7', '0:8', '0:9'])
    expect(po(await collect(ctx.twain.history('t', { from: 2, limit: 2 })))).toEqual(['0:6', '0:7'])
    expect(po(await takeN(ctx.twain.tail('t', { from: 'start' }), 1))).toEqual(['0:6'])
  })

  it('streams are Observables: from(stream) and asObservable()', async () => {
    await ctx.twain.createTopic('t')
    await fill(ctx.twain, 't', 0, 5)
    const hist = await firstValueFrom(rxFrom(ctx.twain.history<string>('t')).pipe(toArray()))
    expect(hist.map((m) => m.value)).toEqual(['p0-0', 'p0-1', 'p0-2', 'p0-3', 'p0-4'])
    const before = await kind.waitingReads()
    const live = firstValueFrom(ctx.twain.tail<string>('t').asObservable().pipe(take(2), toArray()))
    await until(async () => (await kind.waitingReads()) > before, 5000, 'the tail to wait for data')
    await fill(ctx.twain, 't', 0, 2, 'live-')
    expect((await live).map((m) => m.value)).toEqual(['live-0', 'live-1'])
  })
})
