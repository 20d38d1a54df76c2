// The Redis backend's packed reads (decision 167): a partition reader fetches 1024 entries once its
// reads fill and hands them out over later reads (a group refilling a few at a time), and the
// shared-read script packs a backlog in one pass, skipping an entry twainmq did not write. A raw
// read cut by its byte budget (a gateway page) goes on from the kept reply without fetching it again.
import { describe, expect, it } from 'vitest'
import { rawBudget } from '../../../src/backends/record.js'
import { RedisBackend } from '../../../src/backends/redis/redis-backend.js'
import { records, topicMeta } from '../../contract/fixture.js'
import { useRedisTwain } from '../../helpers/redis-twain.js'
import { streamKeyOf } from '../../helpers/redis-keys.js'

const ctx = useRedisTwain('packed:')

async function fill(topic: string, from: number, count: number): Promise<void> {
  await ctx.twain
    .producer<string>(topic)
    .sendBatch(Array.from({ length: count }, (_, i) => ({ key: from + i, value: `m${from + i}` })))
}

describe('packed Redis reads', () => {
  it('a partitioned member refilling a few at a time gets every offset once, in order, and what is appended later', async () => {
    await ctx.twain.createTopic('p')
    await fill('p', 0, 3000)
    const c = ctx.twain.consumer<string>('p', { group: 'g', maxInFlight: 40 })
    const seen: number[] = []
    for await (const m of c) {
      expect(m.value).toBe(`m${m.offset}`)
      seen.push(m.offset)
      m.ack()
      if (seen.length === 2990) await fill('p', 3000, 500) // appended while the reader keeps a fetched reply
      if (seen.length >= 3500) break
    }
    await c.commit()
    await c.close()
    expect(seen).toEqual(Array.from({ length: 3500 }, (_, i) => i))
    expect((await ctx.twain.describeGroup('g')).topics[0]?.committed).toBe(3500)
  })

  it('a shared member working through a backlog skips (and acknowledges) an entry twainmq did not write', async () => {
    await ctx.twain.createTopic('s')
    await fill('s', 0, 300)
    const key = await streamKeyOf(ctx.twain, 's', 0)
    await ctx.admin.xadd(key, '300-1', 'x', 'not ours')
    await ctx.admin.incr(`${key}:end`)
    await fill('s', 301, 300)
    const c = ctx.twain.consumer<string>('s', { group: 'sg', mode: 'shared', maxInFlight: 50 })
    const seen: number[] = []
    for await (const m of c) {
      expect(m.value).toBe(`m${m.offset}`)
      seen.push(m.offset)
      m.ack()
      if (seen.length >= 600) break
    }
    await c.commit()
    expect(seen.sort((a, b) => a - b)).toEqual([
      ...Array.from({ length: 300 }, (_, i) => i),
      ...Array.from({ length: 300 }, (_, i) => 301 + i),
    ])
    expect((await ctx.admin.xpending(key, 'sg'))[0]).toBe(0)
    await c.close()
  })

  it('a raw read cut by its budget goes on from the kept reply: each entry is fetched once', async () => {
    const b = await RedisBackend.connect(
      { url: ctx.server.url, cluster: false },
      { prefix: 'budget:', clientId: 'budget' },
    )
    try {
      const meta = topicMeta('t')
      await b.createTopic(meta)
      const values = Array.from({ length: 3000 }, (_, i) => `${i}`.padStart(100, 'v'))
      await b.append('t', 0, records(meta, values), 'p')
      const reader = await b.openReader('t', 0, 0)
      await ctx.admin.config('RESETSTAT')
      const offsets: number[] = []
      let pages = 0
      while (offsets.length < values.length) {
        // About 90 values per page: every page ends inside a reply of 1024 entries.
        const budget = rawBudget(9_000)
        for (let got = await reader.readRaw!(1000, budget); got.length > 0; got = await reader.readRaw!(1000, budget)) {
          for (const r of got) offsets.push(r.offset)
        }
        expect(budget.full || offsets.length === values.length).toBe(true)
        pages++
      }
      expect(offsets).toEqual(values.map((_, i) => i))
      expect(pages).toBeGreaterThan(30)
      // 3000 entries are three replies of up to 1024 (plus a read-ahead or two and the empty end),
      // not a fetch per page.
      const stats = String(await ctx.admin.info('commandstats'))
      const calls =
        Number(/cmdstat_evalsha:calls=(\d+)/.exec(stats)?.[1] ?? 0) +
        Number(/cmdstat_eval:calls=(\d+)/.exec(stats)?.[1] ?? 0)
      expect(calls).toBeGreaterThan(0)
      expect(calls).toBeLessThanOrEqual(6)
      await reader.close()
    } finally {
      await b.close()
    }
  })
})
