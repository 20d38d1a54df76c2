/**
 * Backend contract, `retention: { consumed: true }` through `applyRetention`: each partition is
 * trimmed below the lowest commit over every group consuming the topic, of either mode
 * (backends/trim-consumed.ts over `GroupAdmin.topicCommits`). Kinds that cannot trim refuse the
 * retention setting when the topic is created.
 */
import { describe, expect, it } from 'vitest'
import { InvalidArgumentError } from '../../src/core/errors.js'
import { ackShared, commitPartitioned, memberSpec } from './admin-fixture.js'
import { texts, topicMeta } from './fixture.js'
import { kinds, perTest } from './kinds.js'

describe.each(kinds())('$name: consumed retention', (kind) => {
  kind.hooks()
  const ctx = perTest(kind)
  const meta = topicMeta('t', { partitions: 2, retention: { consumed: true } })

  if (kind.caps.retention === 'none') {
    it('refuses a topic with consumed retention', async () => {
      const b = await ctx.fresh()
      await expect(b.createTopic(meta)).rejects.toBeInstanceOf(InvalidArgumentError)
    })
    return
  }

  /** Topic `t` (consumed retention), 2 partitions of 10 entries each. */
  async function setUp() {
    const b = await ctx.fresh({ pollMs: 60_000 })
    await b.createTopic(meta)
    await b.append('t', 0, texts(meta, 'a', 10), 'p')
    await b.append('t', 1, texts(meta, 'b', 10), 'p')
    return b
  }
  const starts = async (b: Awaited<ReturnType<typeof setUp>>) => (await b.offsets('t')).map((o) => o.start)

  it('no group consumes the topic: nothing is trimmed', async () => {
    const b = await setUp()
    await commitPartitioned(b, 'elsewhere', 'other-topic-unknown', []) // a group of another topic does not count
    expect(await b.applyRetention('t')).toBe(0)
    expect(await starts(b)).toEqual([0, 0])
  })

  it('two groups with different commits: each partition is trimmed to the lower one', async () => {
    const b = await setUp()
    await commitPartitioned(b, 'g1', 't', [7, 2])
    await commitPartitioned(b, 'g2', 't', [3, 9])
    expect(await (await ctx.open()).applyRetention('t')).toBe(3 + 2)
    expect(await starts(b)).toEqual([3, 2])
    // A group that joined but committed nothing on a partition holds all of it.
    await b.groups.groupHeartbeat('g3', memberSpec('m3', ['t']), [])
    await commitPartitioned(b, 'g1', 't', [10, 10])
    await commitPartitioned(b, 'g2', 't', [10, 10])
    expect(await b.applyRetention('t')).toBe(0)
    expect(await starts(b)).toEqual([3, 2])
  })

  it('a shared group (where supported) holds the trim back at what it has not acknowledged', async () => {
    const b = await setUp()
    if (!kind.caps.shared) return expect(b.shared).toBeUndefined()
    await commitPartitioned(b, 'pg', 't', [8, 8])
    const m = await ackShared(b, 'sg', 't', 20, [4, 10])
    expect(await b.applyRetention('t')).toBe(4 + 8)
    expect(await starts(b)).toEqual([4, 8])
    await m.leave() // its pending entries stay pending: still held back
    expect(await b.applyRetention('t')).toBe(0)
    expect(await starts(b)).toEqual([4, 8])
  })
})
