/**
 * Backend contract, a processor's outputs (`appendSourced`, docs/format.md "Exactly-once outputs"):
 * an output whose (source, input offset, sequence number) the partition stored is not stored again
 * and gets the stored offset — in one call, across calls, instances and a reopen; a writer whose
 * lease epoch is behind the stored one, or whose deadline has passed, is fenced and writes nothing;
 * the input commit a writer carries makes the partition forget the outputs of inputs below it.
 * twainmq-v1 topics refuse it (the format keeps no headers).
 */
import { describe, expect, it } from 'vitest'
import type { OutputSource, TopicMeta } from '../../src/backends/backend.js'
import { SOURCE_HEADER } from '../../src/backends/source-header.js'
import { FencedError, InvalidArgumentError } from '../../src/core/errors.js'
import { readAll, records, topicMeta } from './fixture.js'
import { kinds, perTest } from './kinds.js'

const src = (epoch: number, committed = 0, deadline = Infinity): OutputSource => ({
  group: 'g',
  topic: 'in',
  partition: 3,
  incarnation: 1,
  epoch,
  committed,
  deadline,
})
const at = (...pairs: Array<[number, number]>) => pairs.map(([offset, seq]) => ({ offset, seq }))
const outcome = (r: Array<{ offset: number; duplicate: boolean }>) =>
  r.map((x) => `${x.offset}${x.duplicate ? '=' : '+'}`)
const values = (meta: TopicMeta, vs: string[]) => records(meta, vs)

describe.each(kinds())('$name: sourced append', (kind) => {
  kind.hooks()
  const ctx = perTest(kind)

  it('stores each output once: in one call, across calls, instances and a reopen', async () => {
    const b = await ctx.fresh()
    const meta = topicMeta('out')
    await b.createTopic(meta)
    if (!kind.caps.headers) {
      await expect(b.appendSourced('out', 0, values(meta, ['a']), 'p', src(1), at([0, 0]))).rejects.toBeInstanceOf(
        InvalidArgumentError,
      )
      return
    }
    await b.append('out', 0, values(meta, ['x']), 'p')
    const first = await b.appendSourced(
      'out',
      0,
      values(meta, ['a0', 'a1', 'b0', 'a0 again']),
      'p',
      src(1),
      at([10, 0], [10, 1], [11, 0], [10, 0]),
    )
    expect(outcome(first)).toEqual(['1+', '2+', '3+', '1='])
    const other = await ctx.open()
    const second = await other.appendSourced(
      'out',
      0,
      values(meta, ['b0 again', 'c0']),
      'q',
      src(1),
      at([11, 0], [12, 0]),
    )
    expect(outcome(second)).toEqual(['3=', '4+'])
    // Another source's positions are its own.
    const another = { ...src(1), partition: 4 }
    const recreated = { ...src(1), incarnation: 2 }
    expect(outcome(await other.appendSourced('out', 0, values(meta, ['d']), 'q', another, at([10, 0])))).toEqual(['5+'])
    // So are those of an input topic created again (its offsets start over).
    expect(outcome(await other.appendSourced('out', 0, values(meta, ['e']), 'q', recreated, at([10, 0])))).toEqual([
      '6+',
    ])
    await other.close()
    expect(await b.append('out', 0, values(meta, ['y']), 'p')).toBe(7)
    const third = await ctx.open()
    // A new instance (a restarted process) knows every stored output, and a new lease (epoch 2) that committed 11.
    const again = await third.appendSourced(
      'out',
      0,
      values(meta, ['a1 again', 'c0 again', 'c1']),
      'r',
      src(2, 11),
      at([10, 1], [12, 0], [12, 1]),
    )
    // Input 10 is below the new lease's commit: forgotten, so stored again (a reset replays); 12 is known.
    expect(outcome(again)).toEqual(['8+', '4=', '9+'])
    const all = await readAll(third, 'out', 0)
    expect(all.map((m) => m.value)).toEqual(['x', 'a0', 'a1', 'b0', 'c0', 'd', 'e', 'y', 'a1 again', 'c1'])
    expect(all[1]?.headers[SOURCE_HEADER]).toBe('g in@1 3 10 0 1 0')
    expect(all[8]?.headers[SOURCE_HEADER]).toBe('g in@1 3 10 1 2 11')
    await third.close()
  })

  it('recognises stored outputs among positions that fall within a call, and large offsets', async () => {
    const b = await ctx.fresh()
    const meta = topicMeta('out')
    await b.createTopic(meta)
    if (!kind.caps.headers) return
    const big = 2 ** 40 + 3 // past 32 bits: offsets are not cut
    await b.appendSourced('out', 0, values(meta, ['20.0', 'big.1']), 'p', src(1), at([20, 0], [big, 1]))
    // Falling positions (a rewind's outputs): the lowest, stored, is found though it comes last.
    const falling = await b.appendSourced(
      'out',
      0,
      values(meta, ['22.0', '21.0', '20.0 again']),
      'p',
      src(1),
      at([22, 0], [21, 0], [20, 0]),
    )
    expect(outcome(falling)).toEqual(['2+', '3+', '0='])
    const other = await ctx.open()
    const again = await other.appendSourced(
      'out',
      0,
      values(meta, ['big.1 again', 'big.0', '21.0 again']),
      'q',
      src(1),
      at([big, 1], [big, 0], [21, 0]),
    )
    expect(outcome(again)).toEqual(['1=', '4+', '3='])
    await other.close()
    const all = await readAll(b, 'out')
    expect(all.map((m) => m.value)).toEqual(['20.0', 'big.1', '22.0', '21.0', 'big.0'])
    expect(all[1]?.headers[SOURCE_HEADER]).toBe(`g in@1 3 ${big} 1 1 0`)
  })

  it('fences a writer behind the stored epoch or past its deadline: nothing of it is stored', async () => {
    const b = await ctx.fresh()
    const meta = topicMeta('out')
    await b.createTopic(meta)
    if (!kind.caps.headers) return
    await b.appendSourced('out', 0, values(meta, ['new lease']), 'p', src(5), at([0, 0]))
    await expect(b.appendSourced('out', 0, values(meta, ['zombie']), 'z', src(4), at([1, 0]))).rejects.toBeInstanceOf(
      FencedError,
    )
    const other = await ctx.open()
    await expect(
      other.appendSourced('out', 0, values(meta, ['zombie']), 'z', src(4), at([0, 0])),
    ).rejects.toBeInstanceOf(FencedError)
    await expect(
      other.appendSourced('out', 0, values(meta, ['late']), 'z', src(5, 0, Date.now() - 1000), at([2, 0])),
    ).rejects.toBeInstanceOf(FencedError)
    await other.close()
    // The same epoch, within its deadline, goes on.
    const ok = await b.appendSourced('out', 0, values(meta, ['next']), 'p', src(5, 0, Date.now() + 60_000), at([1, 0]))
    expect(outcome(ok)).toEqual(['1+'])
    expect((await readAll(b, 'out')).map((m) => m.value)).toEqual(['new lease', 'next'])
  })

  it("forgets its outputs' sources with the topic: an output topic deleted and created again stores them anew", async () => {
    const b = await ctx.fresh()
    const meta = topicMeta('out')
    await b.createTopic(meta)
    if (!kind.caps.headers) return
    expect(outcome(await b.appendSourced('out', 0, values(meta, ['a', 'b']), 'p', src(3), at([0, 0], [1, 0])))).toEqual(
      ['0+', '1+'],
    )
    await b.deleteTopic('out')
    await b.createTopic(meta)
    const other = await ctx.open()
    expect(outcome(await other.appendSourced('out', 0, values(meta, ['a']), 'p', src(2), at([0, 0])))).toEqual(['0+'])
    await other.close()
  })

  it('a new lease that finds every output stored fences the older one in an instance that had read the partition already', async () => {
    const b = await ctx.fresh()
    const meta = topicMeta('out')
    await b.createTopic(meta)
    if (!kind.caps.headers) return
    await b.appendSourced('out', 0, values(meta, ['a0']), 'p', src(1), at([0, 0]))
    // Another process has the partition's sources in memory (it wrote there for another source).
    const other = await ctx.open()
    await other.appendSourced('out', 0, values(meta, ['x']), 'x', { ...src(1), partition: 9 }, at([0, 0]))
    // The partition moves to epoch 2, whose first call is a duplicate: nothing written.
    expect(outcome(await b.appendSourced('out', 0, values(meta, ['a0']), 'q', src(2), at([0, 0])))).toEqual(['0='])
    await expect(
      other.appendSourced('out', 0, values(meta, ['zombie']), 'z', src(1), at([1, 0])),
    ).rejects.toBeInstanceOf(FencedError)
    expect((await readAll(other, 'out')).map((m) => m.value)).toEqual(['a0', 'x'])
    await other.close()
  })

  it('a new lease that finds every output stored still fences the older one, in every instance', async () => {
    const b = await ctx.fresh()
    const meta = topicMeta('out')
    await b.createTopic(meta)
    if (!kind.caps.headers) return
    // Two members of one instance: the first (epoch 1) stores outputs of inputs 0 and 1, then its
    // partition moves to the second (epoch 2), which processes input 0 again: a duplicate, nothing written.
    await b.appendSourced('out', 0, values(meta, ['a0']), 'p', src(1), at([0, 0]))
    await b.appendSourced('out', 0, values(meta, ['b0']), 'p', src(1), at([1, 0]))
    expect(outcome(await b.appendSourced('out', 0, values(meta, ['a0']), 'q', src(2), at([0, 0])))).toEqual(['0='])
    // The first member, as seen by an instance that reads the partition afresh (another process), is fenced.
    const other = await ctx.open()
    await expect(
      other.appendSourced('out', 0, values(meta, ['zombie']), 'z', src(1), at([2, 0])),
    ).rejects.toBeInstanceOf(FencedError)
    expect((await readAll(other, 'out')).map((m) => m.value)).toEqual(['a0', 'b0'])
  })

  it('refuses bad arguments, naming them', async () => {
    const b = await ctx.fresh()
    const meta = topicMeta('out')
    await b.createTopic(meta)
    if (!kind.caps.headers) return
    await expect(b.appendSourced('out', 0, values(meta, ['a']), 'p', src(1), at())).rejects.toThrow(/0 positions for 1/)
    await expect(b.appendSourced('out', 0, values(meta, ['a']), 'p', src(-1), at([0, 0]))).rejects.toThrow(/epoch.*-1/)
    await expect(b.appendSourced('out', 0, values(meta, ['a']), 'p', src(1), at([-2, 0]))).rejects.toThrow(
      InvalidArgumentError,
    )
  })
})
