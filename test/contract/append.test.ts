/**
 * Backend contract, appends: offsets, the records' fields, concurrent appends from two instances,
 * and the end-offset snapshot's ordering against appends.
 */
import { describe, expect, it } from 'vitest'
import { InvalidArgumentError } from '../../src/core/errors.js'
import { endSnapshot, readAll, records, texts, topicMeta } from './fixture.js'
import { kinds, perTest } from './kinds.js'

describe.each(kinds())('$name: append', (kind) => {
  kind.hooks()
  const ctx = perTest(kind)

  it('append resolves with the first offset; offsets are dense from 0, per partition', async () => {
    const b = await ctx.fresh()
    const meta = topicMeta('t', { partitions: 2 })
    await b.createTopic(meta)
    expect(await b.append('t', 0, texts(meta, 'a', 3), 'p')).toBe(0)
    expect(await b.append('t', 0, texts(meta, 'b', 1), 'p')).toBe(3)
    expect(await b.append('t', 1, texts(meta, 'c', 2), 'p')).toBe(0)
    expect(await b.append('t', 0, texts(meta, 'd', 5), 'p')).toBe(4)
    expect((await readAll(b, 't')).map((m) => [m.offset, m.value])).toEqual(
      ['a0', 'a1', 'a2', 'b0', 'd0', 'd1', 'd2', 'd3', 'd4'].map((v, i) => [i, v]),
    )
    expect(await b.offsets('t')).toEqual([
      { partition: 0, start: 0, end: 9 },
      { partition: 1, start: 0, end: 2 },
    ])
  })

  it('a record reads back with its key, timestamp, value kind, headers and producer', async () => {
    const b = await ctx.fresh()
    const meta = topicMeta('t', { keyType: 'char8' })
    await b.createTopic(meta)
    const bytes = Buffer.from([0, 1, 2, 250, 255])
    await b.append(
      't',
      0,
      records(
        meta,
        [
          { key: 'alpha', value: 'héllo' },
          { key: 'b', value: bytes },
        ],
        1_700_000_000_123,
      ),
      'producer-7',
    )
    const [text, raw] = await readAll(b, 't')
    expect(text).toMatchObject({
      topic: 't',
      partition: 0,
      offset: 0,
      key: 'alpha',
      timestamp: 1_700_000_000_123,
      value: 'héllo',
      headers: {},
    })
    expect(raw).toMatchObject({ offset: 1, key: 'b', timestamp: 1_700_000_000_123 })
    expect(Buffer.isBuffer(raw?.value)).toBe(true)
    expect(raw?.value).toEqual(bytes)
    expect(text?.type).toBeUndefined()
    expect(text?.producerId).toBe(kind.caps.producerId ? 'producer-7' : '')

    const withHeaders = records(meta, [{ key: 'h', value: 'v', headers: { trace: 'abc', 'x-ü': 'ö' } }])
    if (kind.caps.headers) {
      expect(await b.append('t', 0, withHeaders, 'p')).toBe(2)
      expect((await readAll(b, 't', 2))[0]?.headers).toEqual({ trace: 'abc', 'x-ü': 'ö' })
    } else {
      await expect(b.append('t', 0, withHeaders, 'p')).rejects.toBeInstanceOf(InvalidArgumentError)
      expect((await b.offsets('t'))[0]?.end).toBe(2) // nothing of the refused batch was written
    }
  })

  it('concurrent appends from two instances: each call consecutive, the union dense, every payload at its offset', async () => {
    const b1 = await ctx.fresh()
    const b2 = await ctx.open()
    const meta = topicMeta('t')
    await b1.createTopic(meta)
    const calls: Array<{ values: string[]; base: Promise<number> }> = []
    for (let batch = 0; batch < 40; batch++) {
      for (const [name, b] of [
        ['a', b1],
        ['b', b2],
      ] as const) {
        const n = 1 + ((batch * 7 + name.charCodeAt(0)) % 6)
        const rs = texts(meta, `${name}${batch}.`, n)
        calls.push({ values: rs.map((r) => r.value as string), base: b.append('t', 0, rs, name) })
      }
    }
    const bases = await Promise.all(calls.map((c) => c.base))
    const expected = new Map<number, string>()
    calls.forEach((c, i) => c.values.forEach((v, k) => expected.set((bases[i] as number) + k, v)))
    const total = calls.reduce((n, c) => n + c.values.length, 0)
    // No two calls share an offset, and together they cover 0..total-1 without holes.
    expect(expected.size).toBe(total)
    expect([...expected.keys()].sort((x, y) => x - y)).toEqual(Array.from({ length: total }, (_, i) => i))
    const read = await readAll(b2, 't', 0, 37)
    expect(read.map((m) => m.offset)).toEqual(Array.from({ length: total }, (_, i) => i))
    for (const m of read) expect(m.value, `offset ${m.offset}`).toBe(expected.get(m.offset))
    expect(await b1.offsets('t')).toEqual([{ partition: 0, start: 0, end: total }])
  })

  it(`the end-offset snapshot is ${kind.caps.endOffsets === 'now' ? 'synchronous' : 'a promise issued at the call'}`, async () => {
    const b = await ctx.fresh()
    await b.createTopic(topicMeta('t', { partitions: 3 }))
    const snap = b.endOffsetsSnapshot('t')
    if (kind.caps.endOffsets === 'now') {
      expect(snap).toEqual([0, 0, 0])
      expect(b.endOffsetsSnapshot('missing')).toBeUndefined()
    } else {
      expect(snap).toBeInstanceOf(Promise)
      expect(await snap).toEqual([0, 0, 0])
    }
  })

  it('a snapshot taken before an append never includes it; one taken after an append resolved always does', async () => {
    const b = await ctx.fresh()
    const meta = topicMeta('t', { partitions: 2 })
    await b.createTopic(meta)
    let resolvedEnd = 0 // end of partition 0 after every append resolved so far
    const checks: Array<Promise<void>> = []
    for (let i = 0; i < 60; i++) {
      const n = 1 + (i % 3)
      const floor = resolvedEnd
      const snap = endSnapshot(b, 't')
      const append = b.append('t', 0, texts(meta, `s${i}.`, n), 'p')
      void append.then((base) => (resolvedEnd = Math.max(resolvedEnd, base + n)))
      checks.push(
        Promise.all([snap, append]).then(([s, base]) => {
          expect(s[0], `snapshot ${i} against its append at ${base}`).toBeLessThanOrEqual(base)
          expect(s[0], `snapshot ${i} against appends resolved before it`).toBeGreaterThanOrEqual(floor)
          expect(s[1]).toBe(0)
        }),
      )
      if (i % 5 === 4) await append // some appends resolve before the next snapshot, some are in flight
    }
    await Promise.all(checks)
    expect(await endSnapshot(b, 't')).toEqual([resolvedEnd, 0])
  })

  it("a snapshot taken after another instance's append resolved includes it", async () => {
    const b1 = await ctx.fresh()
    const b2 = await ctx.open()
    const meta = topicMeta('t')
    await b1.createTopic(meta)
    expect(await endSnapshot(b1, 't')).toEqual([0])
    for (let i = 0; i < 10; i++) {
      const base = await b2.append('t', 0, texts(meta, `o${i}.`, 2), 'p')
      expect(await endSnapshot(b1, 't')).toEqual([base + 2])
    }
  })
})
