// Redis reads of large records come in pages of bounded size (decision 178): the `read` script stops
// adding entries once their records reach its byte budget, reading the stream in steps so the
// entries past the budget are never converted, and a partition reader fetches page after page until
// it has what was asked for (fewer means the end, as a group's fetch loop takes it). Before, a page
// of 1024 records of 32 KiB was one 32 MiB reply: seconds of Lua and decoding, past a Redis Cluster
// client's command timeout (1.5 s) on a loaded machine, so a history read could fail part-way.
import { describe, expect, it } from 'vitest'
import { Scripts } from '../../../src/backends/redis/scripts.js'
import { useRedisTwain } from '../../helpers/redis-twain.js'
import { streamKeyOf } from '../../helpers/redis-keys.js'

const ctx = useRedisTwain('pages:')
const PAD = 'p'.repeat(32 * 1024)

async function fill(topic: string, count: number): Promise<void> {
  await ctx.twain.createTopic(topic)
  const p = ctx.twain.producer<string>(topic)
  for (let i = 0; i < count; i += 100)
    await p.sendBatch(
      Array.from({ length: Math.min(100, count - i) }, (_, j) => ({ key: 0, value: `m${i + j} ${PAD}` })),
    )
}

describe('Redis read pages', () => {
  it('the read script stops near its byte budget (one step of entries past it at most)', async () => {
    await fill('budget', 300)
    const scripts = new Scripts(ctx.admin)
    const key = await streamKeyOf(ctx.twain, 'budget', 0)
    const page = await scripts.call('read', [key], [0, 1024, '0', 1024 * 1024])
    const count = Number(page.toString('latin1', 0, 12).split(' ')[0])
    expect(count).toBeGreaterThan(0)
    expect(count).toBeLessThan(300)
    expect(page.length).toBeLessThan(1024 * 1024 + 64 * 33 * 1024)
    // Without a budget (an empty argument), a page is as long as its count.
    const whole = await scripts.call('read', [key], [0, 1024, '0', ''])
    expect(Number(whole.toString('latin1', 0, 12).split(' ')[0])).toBe(300)
  })

  it('history of 32 KiB records reads every record once, in order', async () => {
    await fill('big', 2100)
    let n = 0
    for await (const m of ctx.twain.history<string>('big')) {
      expect(m.offset).toBe(n)
      expect(m.value.startsWith(`m${n} `)).toBe(true)
      n++
    }
    expect(n).toBe(2100)
  })

  it('a partitioned member over 32 KiB records gets every offset once, in order (short pages do not look like the end)', async () => {
    await fill('group', 700)
    const c = ctx.twain.consumer<string>('group', { group: 'g', maxInFlight: 300 })
    let n = 0
    for await (const m of c) {
      expect(m.offset).toBe(n)
      n++
      m.ack()
      if (n >= 700) break
    }
    await c.close()
    expect(n).toBe(700)
  })
})
