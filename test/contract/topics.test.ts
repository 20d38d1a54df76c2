/**
 * Backend contract, topic administration and lifecycle: createTopic, getTopic, deleteTopic,
 * listTopics, offsets, ping and close, called directly on every implementation.
 */
import { describe, expect, it } from 'vitest'
import type { Backend } from '../../src/backends/backend.js'
import { HOST } from '../../src/backends/liveness.js'
import { InvalidArgumentError, TopicExistsError, TopicNotFoundError, TwainError } from '../../src/core/errors.js'
import { readAll, texts, topicMeta, within } from './fixture.js'
import { kinds, perTest } from './kinds.js'

describe.each(kinds())('$name: topics', (kind) => {
  kind.hooks()
  const ctx = perTest(kind)

  it('createTopic then getTopic gives back every TopicMeta field, on this and another instance', async () => {
    const b = await ctx.fresh()
    const retention =
      kind.caps.retention === 'none'
        ? {}
        : { maxMessages: 1000, maxAgeMs: 86_400_000, maxBytes: 1 << 20, consumed: true }
    const meta = topicMeta('orders', {
      partitions: 3,
      keyType: 'char12',
      messageTypes: ['shop.Order', 'shop.Refund'],
      retention,
      maxMessageBytes: 4096,
      createdAt: 1_600_000_000_123,
    })
    const before = Date.now()
    await b.createTopic(meta)
    const got = await b.getTopic('orders')
    if (kind.caps.storesCreatedAt) expect(got).toEqual(meta)
    else {
      // twainmq-v1 configs have no creation time: the config file's time stands in.
      expect({ ...got, createdAt: 0 }).toEqual({ ...meta, createdAt: 0 })
      expect(got.createdAt).toBeGreaterThanOrEqual(before - 1000)
      expect(got.createdAt).toBeLessThanOrEqual(Date.now() + 1000)
    }
    const other = await ctx.open()
    expect(await other.getTopic('orders')).toEqual(got)
  })

  it('attributes round-trip through createTopic and getTopic on another instance (twainmq-v1: refused)', async () => {
    const b = await ctx.fresh()
    const meta = topicMeta('withattrs', {
      attributes: { 'content-type': 'text/plain', 'ds.expires': '2030-01-01T00:00:00Z' },
    })
    if (kind.caps.retention === 'none') {
      await expect(b.createTopic(meta)).rejects.toBeInstanceOf(InvalidArgumentError)
      return
    }
    await b.createTopic(meta)
    expect((await (await ctx.open()).getTopic('withattrs')).attributes).toEqual(meta.attributes)
  })

  it('a second createTopic of a name is TopicExistsError (from either instance) and leaves the first config', async () => {
    const b = await ctx.fresh()
    const other = await ctx.open()
    await b.createTopic(topicMeta('t', { partitions: 2 }))
    await expect(b.createTopic(topicMeta('t', { partitions: 5 }))).rejects.toBeInstanceOf(TopicExistsError)
    await expect(other.createTopic(topicMeta('t', { partitions: 7 }))).rejects.toBeInstanceOf(TopicExistsError)
    expect((await b.getTopic('t')).partitions).toBe(2)
    expect(await b.offsets('t')).toHaveLength(2)
  })

  it('two concurrent creates of one name: exactly one wins, the other is TopicExistsError', async () => {
    const b = await ctx.fresh()
    const other = await ctx.open()
    const results = await Promise.allSettled([
      b.createTopic(topicMeta('race', { partitions: 2 })),
      other.createTopic(topicMeta('race', { partitions: 3 })),
    ])
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1)
    const lost = results.find((r) => r.status === 'rejected') as PromiseRejectedResult
    expect(lost.reason).toBeInstanceOf(TopicExistsError)
    const winner = results[0]?.status === 'fulfilled' ? 2 : 3
    expect((await b.getTopic('race')).partitions).toBe(winner)
  })

  it('every per-topic method on a missing topic is TopicNotFoundError', async () => {
    const b = await ctx.fresh()
    const meta = topicMeta('nope')
    const calls: Array<[string, () => Promise<unknown>]> = [
      ['getTopic', () => b.getTopic('nope')],
      ['deleteTopic', () => b.deleteTopic('nope')],
      ['offsets', () => b.offsets('nope')],
      ['openReader', () => b.openReader('nope', 0, 0)],
      ['append', () => b.append('nope', 0, texts(meta, 'v', 1), 'p')],
      ['offsetForTime', () => b.offsetForTime('nope', 0, 0)],
      ['trimBefore', () => b.trimBefore('nope', 0, 1)],
      ['applyRetention', () => b.applyRetention('nope')],
    ]
    for (const [what, call] of calls) {
      const e = await call().then(
        () => new Error(`${what} resolved`),
        (err: unknown) => err,
      )
      expect(e, what).toBeInstanceOf(TopicNotFoundError)
      expect((e as Error).message, what).toContain('"nope"')
    }
  })

  it('listTopics is sorted and leaves out internal `__` topics and group state', async () => {
    const b = await ctx.fresh()
    expect(await b.listTopics()).toEqual([])
    for (const name of ['zeta', 'alpha', 'mid', '__internal']) await b.createTopic(topicMeta(name))
    await b.groups.groupHeartbeat(
      'g',
      { id: 'm', name: 'm', topics: ['alpha'], sessionTimeoutMs: 30_000, pid: process.pid, host: HOST },
      [],
    )
    expect(await b.listTopics()).toEqual(['alpha', 'mid', 'zeta'])
    expect((await b.getTopic('__internal')).name).toBe('__internal') // hidden from the list, not gone
    expect(await (await ctx.open()).listTopics()).toEqual(['alpha', 'mid', 'zeta'])
  })

  it('deleteTopic removes the data: a topic created again with the name starts at offset 0', async () => {
    const b = await ctx.fresh()
    const meta = topicMeta('t')
    await b.createTopic(meta)
    await b.append('t', 0, texts(meta, 'old', 5), 'p')
    await b.deleteTopic('t')
    await expect(b.getTopic('t')).rejects.toBeInstanceOf(TopicNotFoundError)
    expect(await b.listTopics()).toEqual([])
    await b.createTopic(topicMeta('t'))
    expect(await b.offsets('t')).toEqual([{ partition: 0, start: 0, end: 0 }])
    expect(await b.append('t', 0, texts(meta, 'new', 1), 'p')).toBe(0)
    expect((await readAll(b, 't')).map((m) => [m.offset, m.value])).toEqual([[0, 'new0']])
  })

  it('offsets: start and end per partition for an empty, a written and a trimmed partition', async () => {
    const b = await ctx.fresh()
    const meta = topicMeta('t', { partitions: 3 })
    await b.createTopic(meta)
    expect(await b.offsets('t')).toEqual([0, 1, 2].map((partition) => ({ partition, start: 0, end: 0 })))
    await b.append('t', 1, texts(meta, 'a', 4), 'p')
    await b.append('t', 2, texts(meta, 'b', 6), 'p')
    if (kind.caps.trim === 'exact') {
      expect(await b.trimBefore('t', 2, 4)).toBe(4)
      expect(await b.offsets('t')).toEqual([
        { partition: 0, start: 0, end: 0 },
        { partition: 1, start: 0, end: 4 },
        { partition: 2, start: 4, end: 6 },
      ])
    } else {
      await expect(b.trimBefore('t', 2, 4)).rejects.toBeInstanceOf(InvalidArgumentError)
      expect(await b.offsets('t')).toEqual([
        { partition: 0, start: 0, end: 0 },
        { partition: 1, start: 0, end: 4 },
        { partition: 2, start: 0, end: 6 },
      ])
    }
  })

  it('ping is true while open; close is idempotent (also concurrently) and ends open readers', async () => {
    const b = await ctx.fresh()
    const meta = topicMeta('t')
    await b.createTopic(meta)
    await b.append('t', 0, texts(meta, 'v', 3), 'p')
    expect(await b.ping()).toBe(true)
    const reader = await b.openReader('t', 0, 0)
    await Promise.all([b.close(), b.close()])
    await b.close()
    expect(await within(reader.read(10), 2000, 'read of a reader of a closed backend')).toEqual([])
  })

  it('a closed backend: ping is false', async () => {
    const b = await ctx.fresh()
    await b.close()
    expect(await within(b.ping(), 3000, 'ping after close')).toBe(false)
  })

  it('a closed backend rejects every call at once with a non-retriable TwainError (ClosedError)', async () => {
    const b = await ctx.fresh()
    const meta = topicMeta('t')
    await b.createTopic(meta)
    await b.append('t', 0, texts(meta, 'v', 1), 'p')
    await b.close()
    const calls: Array<[string, (b: Backend) => Promise<unknown>]> = [
      ['createTopic', (x) => x.createTopic(topicMeta('u'))],
      ['getTopic', (x) => x.getTopic('t')],
      ['listTopics', (x) => x.listTopics()],
      ['offsets', (x) => x.offsets('t')],
      ['append', (x) => x.append('t', 0, texts(meta, 'late', 1), 'p')],
      ['openReader + read', async (x) => (await x.openReader('t', 0, 0)).read(10)],
      ['offsetForTime', (x) => x.offsetForTime('t', 0, 0)],
      [
        'heartbeat',
        (x) =>
          x.groups.groupHeartbeat(
            'g',
            { id: 'm', name: 'm', topics: ['t'], sessionTimeoutMs: 30_000, pid: process.pid, host: HOST },
            [],
          ),
      ],
    ]
    const outcomes: string[] = []
    for (const [what, call] of calls) {
      const e = await within(call(b), 2000, `${what} after close`).then(
        () => undefined,
        (err: unknown) => err,
      )
      const ok = e instanceof TwainError && !e.retriable
      if (!ok)
        outcomes.push(
          `${what}: ${e === undefined ? 'resolved' : `${(e as Error).name} ${(e as TwainError).retriable === true ? '(retriable) ' : ''}${(e as Error).message}`}`,
        )
    }
    expect(outcomes).toEqual([])
  })
})
