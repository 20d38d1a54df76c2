// Scripts go as EVALSHA commands handed to the client directly (decision 174). A server that lost
// them (SCRIPT FLUSH here; a restart or a failover to a replica in production) answers NOSCRIPT and
// the call goes again with the script's text: sends, history, partitioned and shared groups carry on.
import { describe, expect, it } from 'vitest'
import { useRedisTwain } from '../../helpers/redis-twain.js'

const ctx = useRedisTwain('noscript:')

async function take<T>(
  it: AsyncIterable<T>,
  n: number,
  each: (m: T) => Promise<void> | void = () => undefined,
): Promise<T[]> {
  const out: T[] = []
  if (n === 0) return out
  for await (const m of it) {
    await each(m)
    out.push(m)
    if (out.length >= n) break
  }
  return out
}

describe('Redis scripts after the server lost them (NOSCRIPT)', () => {
  it('sends, history and both kinds of group work across SCRIPT FLUSH', async () => {
    await ctx.twain.createTopic('t', { partitions: 2 })
    const p = ctx.twain.producer<string>('t')
    // Every script in use once, so each has been loaded on the server before it is flushed.
    expect(await p.send(1, 'a0')).toMatchObject({ offset: 0 })
    const shared = ctx.twain.consumer<string>('t', { group: 's', mode: 'shared' })
    expect((await take(shared, 1, (m) => m.ack())).map((m) => m.value)).toEqual(['a0'])
    const parted = ctx.twain.consumer<string>('t', { group: 'g' })
    expect((await take(parted, 1, (m) => m.ack())).map((m) => m.value)).toEqual(['a0'])
    await shared.close()
    await parted.close()
    expect(await ctx.admin.script('FLUSH')).toBe('OK')
    expect(await ctx.admin.script('EXISTS', '0000000000000000000000000000000000000000')).toEqual([0])

    const sent = await Promise.all(Array.from({ length: 20 }, (_, i) => p.send(i, `b${i}`)))
    expect(sent).toHaveLength(20)
    const history = await take(ctx.twain.history<string>('t'), 21)
    expect(history.map((m) => m.value).sort()).toEqual(['a0', ...Array.from({ length: 20 }, (_, i) => `b${i}`)].sort())
    const shared2 = ctx.twain.consumer<string>('t', { group: 's', mode: 'shared' })
    const parted2 = ctx.twain.consumer<string>('t', { group: 'g' })
    const viaShared = await take(shared2, 20, (m) => m.ack())
    expect(viaShared.map((m) => m.value).sort()).toEqual(Array.from({ length: 20 }, (_, i) => `b${i}`).sort())
    const viaGroup = await take(parted2, 20, (m) => m.ack())
    expect(viaGroup.map((m) => m.value).sort()).toEqual(Array.from({ length: 20 }, (_, i) => `b${i}`).sort())
    // The calls above did meet NOSCRIPT (and went again with the text): the path under test ran.
    expect(Number(/errorstat_NOSCRIPT:count=(\d+)/.exec(await ctx.admin.info('errorstats'))?.[1] ?? 0)).toBeGreaterThan(
      0,
    )
    await shared2.close()
    await parted2.close()
  })
})
