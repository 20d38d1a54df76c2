/**
 * Backend contract, idempotent appends (`appendIdempotent`, `send(…, { id })`): a record whose id
 * the partition stored within the window is not stored again and gets the stored record's offset —
 * earlier in the same call, from another instance, after an instance is closed and a new one opened
 * — while records without an id, and ids past their window, are stored as `append` stores them.
 * twainmq-v1 topics refuse it (the format keeps no headers).
 */
import { describe, expect, it } from 'vitest'
import { ID_HEADER } from '../../src/backends/record.js'
import type { TopicMeta } from '../../src/backends/backend.js'
import { InvalidArgumentError } from '../../src/core/errors.js'
import { readAll, records, topicMeta } from './fixture.js'
import { kinds, perTest } from './kinds.js'

const WINDOW = 60_000

/** Records with values `v` and, where given, ids. */
const withIds = (meta: TopicMeta, specs: Array<[string, string | undefined]>, timestamp?: number) =>
  records(
    meta,
    specs.map(([value, id]) => (id === undefined ? { value } : { value, headers: { [ID_HEADER]: id } })),
    timestamp,
  )

const offsetsOf = (r: Array<{ offset: number; duplicate: boolean }>) =>
  r.map((x) => `${x.offset}${x.duplicate ? '=' : '+'}`)

describe.each(kinds())('$name: idempotent append', (kind) => {
  kind.hooks()
  const ctx = perTest(kind)

  it('stores each id once within its window: in one call, across calls and instances, and after a reopen', async () => {
    const b = await ctx.fresh()
    const meta = topicMeta('t')
    await b.createTopic(meta)
    if (!kind.caps.headers) {
      await expect(b.appendIdempotent('t', 0, withIds(meta, [['a', 'id-a']]), 'p', WINDOW)).rejects.toBeInstanceOf(
        InvalidArgumentError,
      )
      return
    }
    // A plain append first, so offsets do not start at 0.
    await b.append('t', 0, records(meta, ['x', 'y']), 'p')
    const first = await b.appendIdempotent(
      't',
      0,
      withIds(meta, [
        ['a', 'id-a'],
        ['n', undefined],
        ['b', 'id-b'],
        ['a again', 'id-a'],
      ]),
      'p',
      WINDOW,
    )
    expect(offsetsOf(first)).toEqual(['2+', '3+', '4+', '2='])
    // Another instance on the same store sees them.
    const other = await ctx.open()
    const second = await other.appendIdempotent(
      't',
      0,
      withIds(meta, [
        ['b2', 'id-b'],
        ['c', 'id-c'],
        ['n2', undefined],
      ]),
      'q',
      WINDOW,
    )
    expect(offsetsOf(second)).toEqual(['4=', '5+', '6+'])
    // Ordinary appends between them take the next offsets.
    expect(await b.append('t', 0, records(meta, ['z']), 'p')).toBe(7)
    await other.close()
    // A new instance (a restarted process) still knows every id.
    const third = await ctx.open()
    const again = await third.appendIdempotent(
      't',
      0,
      withIds(meta, [
        ['c2', 'id-c'],
        ['a3', 'id-a'],
        ['d', 'id-d'],
      ]),
      'r',
      WINDOW,
    )
    expect(offsetsOf(again)).toEqual(['5=', '2=', '8+'])
    const all = await readAll(third, 't')
    expect(all.map((m) => m.value)).toEqual(['x', 'y', 'a', 'n', 'b', 'c', 'n2', 'z', 'd'])
    expect(all.map((m) => m.headers[ID_HEADER])).toEqual([
      undefined,
      undefined,
      'id-a',
      undefined,
      'id-b',
      'id-c',
      undefined,
      undefined,
      'id-d',
    ])
    await third.close()
  })

  it("an id is per partition, and the window is the caller's: past it the id is stored again", async () => {
    const b = await ctx.fresh()
    const meta = { ...topicMeta('t'), partitions: 2 }
    await b.createTopic(meta)
    if (!kind.caps.headers) return // refused, as the first case shows
    expect(offsetsOf(await b.appendIdempotent('t', 0, withIds(meta, [['a', 'same']]), 'p', WINDOW))).toEqual(['0+'])
    expect(offsetsOf(await b.appendIdempotent('t', 1, withIds(meta, [['a', 'same']]), 'p', WINDOW))).toEqual(['0+'])
    // Seen within a long window, but not within 1 ms once a few ms have passed.
    await new Promise((r) => setTimeout(r, 20))
    expect(offsetsOf(await b.appendIdempotent('t', 0, withIds(meta, [['a', 'same']]), 'p', WINDOW))).toEqual(['0='])
    expect(offsetsOf(await b.appendIdempotent('t', 0, withIds(meta, [['a2', 'same']]), 'p', 1))).toEqual(['1+'])
    // The id now points at its latest record.
    expect(offsetsOf(await b.appendIdempotent('t', 0, withIds(meta, [['a3', 'same']]), 'p', WINDOW))).toEqual(['1='])
  })

  it('instances racing with the same ids store each id once', async () => {
    const a = await ctx.fresh()
    const meta = topicMeta('t')
    await a.createTopic(meta)
    if (!kind.caps.headers) return
    const others = [a, await ctx.open(), await ctx.open()]
    const ids = Array.from({ length: 60 }, (_, i) => `id-${i}`)
    const results = await Promise.all(
      others.map(async (inst, w) => {
        const got: Array<{ offset: number; duplicate: boolean }> = []
        for (let i = 0; i < ids.length; i += 6) {
          const batch = ids.slice(i, i + 6).map((id): [string, string] => [`${id}@${w}`, id])
          got.push(...(await inst.appendIdempotent('t', 0, withIds(meta, batch), `w${w}`, WINDOW)))
        }
        return got
      }),
    )
    const stored = await readAll(a, 't')
    expect(stored.map((m) => m.headers[ID_HEADER])).toHaveLength(ids.length)
    expect(new Set(stored.map((m) => m.headers[ID_HEADER]))).toEqual(new Set(ids))
    // Every instance was told the one offset each id has.
    const offsetOf = new Map(stored.map((m) => [m.headers[ID_HEADER] as string, m.offset]))
    for (const got of results) expect(got.map((r) => r.offset)).toEqual(ids.map((id) => offsetOf.get(id)))
    expect(results.flat().filter((r) => !r.duplicate)).toHaveLength(ids.length)
    for (const inst of others.slice(1)) await inst.close()
  })
})
