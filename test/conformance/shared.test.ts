// Conformance: shared groups (`mode: 'shared'`, DESIGN §3.6) — Redis competing consumers; the file
// backend refuses the mode. The Redis specifics (claims, restarts, slow members, trims, teardown)
// are in test/integration/redis-shared*.test.ts.
import { describe, expect, it } from 'vitest'
import { InvalidArgumentError, type GroupMessage } from '../../src/index.js'
import { until } from '../helpers/spawn.js'
import { backends, perTest } from './backends.js'
import { pollN } from '../helpers/poll.js'
import { sleep } from '../helpers/wait.js'

describe.each(backends())('shared groups on $name', (kind) => {
  kind.hooks()
  const ctx = perTest(kind)

  if (!kind.redis) {
    it("mode: 'shared' needs the Redis backend: InvalidArgumentError", async () => {
      await ctx.twain.createTopic('t')
      expect(() => ctx.twain.consumer('t', { group: 'g', mode: 'shared' })).toThrow(InvalidArgumentError)
      expect(() => ctx.twain.consumer('t', { group: 'g', mode: 'shared' })).toThrow(/Redis backend/)
    })
    return
  }

  it('members of two instances share the messages; each is delivered once; describeGroup shows pending per partition', async () => {
    await ctx.twain.createTopic('t', { partitions: 2 })
    const other = await ctx.open()
    const a = ctx.twain.consumer<string>('t', { group: 'g', mode: 'shared', name: 'a' })
    const b = other.consumer<string>('t', { group: 'g', mode: 'shared', name: 'b' })
    await Promise.all([a.rebalance(), b.rebalance()])
    expect(a.assignments()).toEqual(b.assignments())
    await ctx.twain.producer<string>('t').sendBatch(Array.from({ length: 40 }, (_, i) => ({ key: i, value: `v${i}` })))
    const got: GroupMessage<string>[] = []
    await until(
      () => {
        got.push(...a.pollMany(100), ...b.pollMany(100))
        return got.length >= 40
      },
      5000,
      '40 messages',
    )
    await sleep(100)
    got.push(...a.pollMany(100), ...b.pollMany(100))
    expect(got).toHaveLength(40)
    expect(new Set(got.map((m) => `${m.partition}@${m.offset}`)).size).toBe(40)
    const d = await ctx.twain.describeGroup('g')
    expect(d.topics.reduce((s, t) => s + (t.pending ?? 0), 0)).toBe(40)
    for (const m of got) m.ack()
    await Promise.all([a.commit(), b.commit()])
    const after = await ctx.twain.describeGroup('g')
    expect(after.topics.map((t) => t.pending)).toEqual([0, 0])
    expect(after.topics.map((t) => t.lag)).toEqual([0, 0])
    await Promise.all([a.close(), b.close()])
  })

  it('nack re-delivers with deliveryCount + 1; term without a dead-letter topic drops the message', async () => {
    await ctx.twain.createTopic('t')
    await ctx.twain.producer<string>('t').sendBatch([
      { key: 1, value: 'x' },
      { key: 2, value: 'y' },
    ])
    const c = ctx.twain.consumer<string>('t', { group: 'g', mode: 'shared' })
    const [x, y] = await pollN(c, 2)
    expect([x?.deliveryCount, y?.deliveryCount]).toEqual([1, 1])
    x?.nack()
    y?.term('no')
    const [again] = await pollN(c, 1)
    expect([again?.value, again?.deliveryCount]).toEqual(['x', 2])
    again?.ack()
    await c.commit()
    expect((await ctx.twain.describeGroup('g')).topics[0]?.pending).toBe(0)
    await c.close()
  })

  it('a consumer is a membership: break ends the view, the next iteration continues after the last delivered message', async () => {
    await ctx.twain.createTopic('t')
    await ctx.twain.producer<string>('t').sendBatch(Array.from({ length: 4 }, (_, i) => ({ key: i, value: `v${i}` })))
    const c = ctx.twain.consumer<string>('t', { group: 'g', mode: 'shared' })
    for await (const m of c) {
      m.ack()
      if (m.offset === 1) break
    }
    const rest: number[] = []
    for await (const m of c) {
      rest.push(m.offset)
      m.ack()
      if (rest.length === 2) break
    }
    expect(rest).toEqual([2, 3])
    await c.close()
    expect(c.assignments()).toEqual([])
  })
})
