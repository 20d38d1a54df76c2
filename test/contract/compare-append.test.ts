/**
 * Backend contract, compare-and-append (`append(…, { expectedEnd })`): written only at the expected
 * end, atomically across instances (each its own appender and lock or connection), else
 * `AppendConflictError` with the end found and nothing written. The HTTP gateway's producer and
 * closure checks stand on it. twainmq-v1 topics refuse it (they cannot store the gateway's headers).
 */
import { describe, expect, it } from 'vitest'
import { AppendConflictError, InvalidArgumentError } from '../../src/core/errors.js'
import { readAll, texts, topicMeta } from './fixture.js'
import { kinds, perTest } from './kinds.js'

describe.each(kinds())('$name: compare-and-append', (kind) => {
  kind.hooks()
  const ctx = perTest(kind)

  it('writes at the expected end; at any other end it writes nothing and reports the end found', async () => {
    const b = await ctx.fresh()
    const meta = topicMeta('t')
    await b.createTopic(meta)
    if (!kind.caps.headers) {
      await expect(b.append('t', 0, texts(meta, 'a', 1), 'p', { expectedEnd: 0 })).rejects.toBeInstanceOf(
        InvalidArgumentError,
      )
      return
    }
    expect(await b.append('t', 0, texts(meta, 'a', 2), 'p', { expectedEnd: 0 })).toBe(0)
    for (const stale of [0, 1, 3, 1000]) {
      const e = await b.append('t', 0, texts(meta, 'x', 1), 'p', { expectedEnd: stale }).then(
        () => undefined,
        (err: unknown) => err,
      )
      expect(e, `expectedEnd ${stale}`).toBeInstanceOf(AppendConflictError)
      expect(e).toMatchObject({ code: 'ERR_APPEND_CONFLICT', end: 2, retriable: false })
      expect((e as Error).message).toContain(String(stale))
    }
    expect(await b.append('t', 0, texts(meta, 'b', 1), 'p', { expectedEnd: 2 })).toBe(2)
    expect((await readAll(b, 't')).map((m) => m.value)).toEqual(['a0', 'a1', 'b0'])
  })

  it('two instances racing at the same end: one wins each round, the log holds only the winners, each at its offset', async () => {
    const a = await ctx.fresh()
    const meta = topicMeta('t')
    await a.createTopic(meta)
    if (!kind.caps.headers) return // refused, as the first case shows
    const b = await ctx.open()
    const won: Array<{ tag: string; at: number }> = []
    let conflicts = 0
    const writer = async (inst: typeof a, tag: string): Promise<void> => {
      for (let i = 0; i < 25; i++) {
        const end = (await inst.offsets('t'))[0]?.end as number
        try {
          const at = await inst.append('t', 0, texts(meta, `${tag}${i}-`, 2), 'p', { expectedEnd: end })
          expect(at).toBe(end)
          won.push({ tag: `${tag}${i}-`, at })
        } catch (e) {
          if (!(e instanceof AppendConflictError)) throw e
          expect(e.end).toBeGreaterThan(end)
          conflicts++
        }
      }
    }
    await Promise.all([writer(a, 'a'), writer(b, 'b')])
    const log = await readAll(a, 't')
    expect(log).toHaveLength(won.length * 2)
    for (const w of won) expect(log.slice(w.at, w.at + 2).map((m) => m.value)).toEqual([`${w.tag}0`, `${w.tag}1`])
    expect(won.length + conflicts).toBe(50)
  })

  it('a batch larger than one script call or frame is all-or-nothing at the expected end', async () => {
    const b = await ctx.fresh()
    const meta = topicMeta('t')
    await b.createTopic(meta)
    if (!kind.caps.headers) return
    await b.append('t', 0, texts(meta, 'a', 3), 'p')
    expect(await b.append('t', 0, texts(meta, 'big', 4500), 'p', { expectedEnd: 3 })).toBe(3)
    await expect(b.append('t', 0, texts(meta, 'late', 4500), 'p', { expectedEnd: 3 })).rejects.toMatchObject({
      end: 4503,
    })
    expect((await b.offsets('t'))[0]?.end).toBe(4503)
  })
})
