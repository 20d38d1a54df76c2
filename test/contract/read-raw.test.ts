/**
 * Backend contract, `PartitionReader.readRaw`: the records `read` gives, undecoded —
 * same offsets and types, and value bytes that decode to the same values — all of one call valid
 * together until the reader's next call, across read windows, segments, seeks and trims.
 */
import { describe, expect, it } from 'vitest'
import type { Backend, PartitionReader } from '../../src/backends/backend.js'
import { rawBudget, type RawRecord } from '../../src/backends/record.js'
import { decodeValue } from '../../src/core/values.js'
import { records, topicMeta } from './fixture.js'
import { kinds, perTest } from './kinds.js'

/** 3,000 records of about 1.1 KiB (over 3 MiB: several 1 MiB read windows), text and bytes, some with headers. */
async function written(b: Backend, headers: boolean): Promise<void> {
  const meta = topicMeta('t')
  await b.createTopic(meta)
  for (let batch = 0; batch < 30; batch++) {
    const specs = Array.from({ length: 100 }, (_, j) => {
      const i = batch * 100 + j
      const value = i % 3 === 1 ? Buffer.alloc(1100, i % 251) : `${i}:${'é'.repeat(550)}`
      return headers && i % 5 === 0 ? { value, headers: { n: String(i) } } : { value }
    })
    await b.append('t', 0, records(meta, specs), 'p')
  }
}

/** A value as a string to compare (deep equality of thousands of Buffers is slow). */
const shown = (v: unknown): unknown => (Buffer.isBuffer(v) ? `bytes:${v.toString('base64')}` : v)

/** Decode everything one readRaw call returned, after it returned (they must all still be valid). */
const decoded = (raw: readonly RawRecord[]): Array<[number, unknown]> =>
  raw.map((r) => [r.offset, shown(decodeValue(r.kind, r.buf, r.start, r.end))])

/** What a raw record says besides its value: time and headers (none: `{}`, as `read` gives). */
const besides = (raw: readonly RawRecord[]): Array<[number, number, Record<string, string>]> =>
  raw.map((r) => [r.offset, r.timestamp, r.headers ?? {}])

async function readAllRaw(r: PartitionReader, max: number): Promise<Array<[number, unknown]>> {
  const out: Array<[number, unknown]> = []
  for (;;) {
    const got = await r.readRaw(max)
    if (got.length === 0) return out
    expect(got.length).toBeLessThanOrEqual(max)
    out.push(...decoded(got))
  }
}

describe.each(kinds())('$name: readRaw', (kind) => {
  kind.hooks()
  const ctx = perTest(kind)

  it('gives the offsets and values read gives, every record of a call valid until the next call', async () => {
    const b = await ctx.fresh({ segmentBytes: 1024 * 1024 })
    await written(b, kind.caps.headers)
    const r = await b.openReader('t', 0, 0)
    const full = await b.openReader('t', 0, 0)
    const expected: Array<[number, unknown]> = []
    for (let got = await full.read(1000); got.length > 0; got = await full.read(1000))
      expected.push(...got.map((m): [number, unknown] => [m.offset, shown(m.value)]))
    await full.close()
    expect(expected).toHaveLength(3000)
    expect(await readAllRaw(r, 100_000)).toEqual(expected)
    expect(r.next).toBe(3000)
    r.seek(0)
    // A raw read may stop early (at the end of the bytes it has read: its records point into them).
    const firstRaw = besides(await r.readRaw(300))
    expect(firstRaw.length).toBeGreaterThanOrEqual(100)
    const firstRead = await b.openReader('t', 0, 0)
    const read300 = (await firstRead.read(300)).map((m) => [m.offset, m.timestamp, m.headers])
    expect(firstRaw).toEqual(read300.slice(0, firstRaw.length))
    await firstRead.close()
    if (kind.caps.headers)
      expect(firstRaw.filter(([, , h]) => h.n !== undefined).map(([o]) => o)).toEqual(
        Array.from({ length: Math.ceil(firstRaw.length / 5) }, (_, i) => i * 5),
      )
    r.seek(1234)
    expect(await readAllRaw(r, 7)).toEqual(expected.slice(1234))
    await r.close()
  })

  it('stops before the first record a budget has no room for, and continues with it', async () => {
    const b = await ctx.fresh({ segmentBytes: 1024 * 1024 })
    await written(b, kind.caps.headers)
    const all = await b.openReader('t', 0, 0)
    const expected = await readAllRaw(all, 100_000)
    await all.close()
    const r = await b.openReader('t', 0, 0)
    const seen: Array<[number, unknown]> = []
    let pages = 0
    while (seen.length < expected.length) {
      // About 20 KiB per page: it ends inside frames of 100 records (~110 KiB) and inside reads.
      const budget = rawBudget(20_000)
      const page: Array<[number, unknown]> = []
      let bytes = 0
      for (let got = await r.readRaw(37, budget); got.length > 0; got = await r.readRaw(37, budget)) {
        bytes += got.reduce((n, x) => n + x.end - x.start, 0)
        page.push(...decoded(got))
      }
      expect(page.length).toBeGreaterThan(0)
      expect(budget.given).toBe(page.length)
      if (page.length > 1) expect(bytes).toBeLessThanOrEqual(20_000)
      // Full, or the end: the next record would not have fitted.
      if (seen.length + page.length < expected.length) expect(budget.full).toBe(true)
      expect(r.next).toBe((page.at(-1) as [number, unknown])[0] + 1)
      seen.push(...page)
      pages++
    }
    expect(seen).toEqual(expected)
    expect(pages).toBeGreaterThan(100)
    // One record larger than the budget is still given, alone.
    r.seek(1)
    const small = rawBudget(10)
    expect((await r.readRaw(10, small)).map((x) => x.offset)).toEqual([1])
    expect(small.full).toBe(true)
    expect(await r.readRaw(10, small)).toEqual([])
    expect(r.next).toBe(2)
    await r.close()
  })

  it('follows trims and appends like read; types are given undecoded', async () => {
    const b = await ctx.fresh()
    const meta = topicMeta('t')
    await b.createTopic(meta)
    await b.append('t', 0, records(meta, ['a', 'b', 'c', 'd']), 'p')
    const r = await b.openReader('t', 0, 0)
    expect(decoded(await r.readRaw(1))).toEqual([[0, 'a']])
    if (kind.caps.trim === 'exact') {
      await b.trimBefore('t', 0, 3)
      expect(decoded(await r.readRaw(10))).toEqual([[3, 'd']])
    }
    await b.append('t', 0, records(meta, ['e']), 'p')
    const tail = await r.readRaw(10)
    expect(decoded(tail).at(-1)).toEqual([4, 'e'])
    expect(tail.every((x) => x.type === undefined)).toBe(true)
    expect(await r.readRaw(10)).toEqual([])
    await r.close()
  })
})
