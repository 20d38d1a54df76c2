// Conformance: topics, validation errors, offsets, length, trim and retention — on both backends.
import { describe, expect, it } from 'vitest'
import {
  InvalidArgumentError,
  InvalidKeyTypeError,
  InvalidTopicNameError,
  TopicExistsError,
  TopicNotFoundError,
  type Twain,
} from '../../src/index.js'
import { backends, perTest } from './backends.js'

const fill = async (twain: Twain, topic: string, partition: number, n: number, prefix = 'v') =>
  twain
    .producer<string>(topic)
    .sendBatch(Array.from({ length: n }, (_, i) => ({ key: i, value: `${prefix}${i}`, partition })))

describe.each(backends())('topics on $name', (kind) => {
  kind.hooks()
  const ctx = perTest(kind)

  it('create, exists, list, describe, delete', async () => {
    const info = await ctx.twain.createTopic('orders', {
      partitions: 3,
      keyType: 'string',
      messageTypes: ['Order'],
      retention: { maxMessages: 100 },
    })
    expect(info).toMatchObject({
      name: 'orders',
      partitions: 3,
      keyType: 'string',
      messageTypes: ['Order'],
      retention: { maxMessages: 100 },
      maxMessageBytes: 1048576,
    })
    expect(info.offsets).toEqual([0, 1, 2].map((partition) => ({ partition, start: 0, end: 0 })))
    await ctx.twain.createTopic('a.b-c_d')
    expect(await ctx.twain.listTopics()).toEqual(['a.b-c_d', 'orders'])
    expect(await ctx.twain.topicExists('orders')).toBe(true)
    expect(await ctx.twain.topicExists('nope')).toBe(false)
    expect((await ctx.twain.describeTopic('a.b-c_d')).keyType).toBe('u16')
    await ctx.twain.deleteTopic('orders')
    expect(await ctx.twain.topicExists('orders')).toBe(false)
    expect(await ctx.twain.listTopics()).toEqual(['a.b-c_d'])
    await expect(ctx.twain.describeTopic('orders')).rejects.toBeInstanceOf(TopicNotFoundError)
    await expect(ctx.twain.deleteTopic('orders')).rejects.toBeInstanceOf(TopicNotFoundError)
  })

  it('attributes are stored with the topic, seen by another instance, compared by ensureTopic, validated', async () => {
    const attributes = { 'content-type': 'application/json', 'ds.ttl': '3600', empty: '', 'x:y': 'ö'.repeat(2048) }
    const info = await ctx.twain.createTopic('s', { attributes })
    expect(info.attributes).toEqual(attributes)
    const other = await ctx.open()
    expect((await other.describeTopic('s')).attributes).toEqual(attributes)
    expect((await ctx.twain.createTopic('plain')).attributes).toEqual({})
    await expect(other.ensureTopic('s', { attributes: { ...attributes } })).resolves.toMatchObject({ attributes })
    await expect(other.ensureTopic('s', { attributes: { 'content-type': 'text/plain' } })).rejects.toThrow(
      /attributes.*content-type.*text\/plain/,
    )
    for (const [bad, why] of [
      [{ 'a b': 'x' }, /"a b" is invalid/],
      [{ n: 5 }, /"n" must be a string, got 5/],
      [{ big: 'x'.repeat(4097) }, /"big" is 4097 bytes/],
      [Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, ''])), /65 entries/],
      [['x'], /attributes must be an object/],
    ] as const) {
      await expect(
        ctx.twain.createTopic('bad', { attributes: bad as unknown as Record<string, string> }),
      ).rejects.toThrow(why)
    }
    expect(await ctx.twain.topicExists('bad')).toBe(false)
  })

  it('another instance on the same store sees the topics and their data', async () => {
    await ctx.twain.createTopic('t', { partitions: 2 })
    await fill(ctx.twain, 't', 1, 3)
    const other = await ctx.open()
    expect(await other.listTopics()).toEqual(['t'])
    expect((await other.describeTopic('t')).offsets).toEqual([
      { partition: 0, start: 0, end: 0 },
      { partition: 1, start: 0, end: 3 },
    ])
    await expect(other.createTopic('t')).rejects.toBeInstanceOf(TopicExistsError)
  })

  it('a deleted and re-created topic starts empty', async () => {
    await ctx.twain.createTopic('t', { partitions: 2 })
    await fill(ctx.twain, 't', 0, 5)
    await ctx.twain.deleteTopic('t')
    await ctx.twain.createTopic('t', { partitions: 1 })
    expect((await ctx.twain.describeTopic('t')).offsets).toEqual([{ partition: 0, start: 0, end: 0 }])
    expect((await fill(ctx.twain, 't', 0, 2)).map((r) => r.offset)).toEqual([0, 1])
  })

  it('validates names, key types, partitions and options', async () => {
    for (const bad of ['', '.', '..', '__internal', 'a/b', 'a b', 'x'.repeat(201), 'é']) {
      await expect(ctx.twain.createTopic(bad)).rejects.toBeInstanceOf(InvalidTopicNameError)
    }
    await expect(ctx.twain.createTopic('k', { keyType: 'u128' as never })).rejects.toBeInstanceOf(InvalidKeyTypeError)
    await expect(ctx.twain.createTopic('k', { keyType: 'char0' as never })).rejects.toBeInstanceOf(InvalidKeyTypeError)
    for (const partitions of [0, -1, 1.5, 10001]) {
      await expect(ctx.twain.createTopic('p', { partitions })).rejects.toBeInstanceOf(InvalidArgumentError)
    }
    await expect(ctx.twain.createTopic('r', { retention: { maxMessages: 0 } })).rejects.toBeInstanceOf(
      InvalidArgumentError,
    )
    await ctx.twain.createTopic('dup')
    const e = await ctx.twain.createTopic('dup').catch((x: unknown) => x)
    expect(e).toBeInstanceOf(TopicExistsError)
    expect((e as Error).message).toContain('dup')
    expect(await ctx.twain.listTopics()).toEqual(['dup'])
  })

  it('operations on a missing topic throw TopicNotFoundError', async () => {
    await expect(ctx.twain.describeTopic('missing')).rejects.toBeInstanceOf(TopicNotFoundError)
    await expect(ctx.twain.length('missing')).rejects.toBeInstanceOf(TopicNotFoundError)
    await expect(ctx.twain.producer('missing').send(1, 'x')).rejects.toBeInstanceOf(TopicNotFoundError)
    await expect(ctx.twain.history('missing')[Symbol.asyncIterator]().next()).rejects.toBeInstanceOf(TopicNotFoundError)
  })

  it('offsets are dense per partition, from 0', async () => {
    await ctx.twain.createTopic('t', { partitions: 2 })
    const p = ctx.twain.producer<number>('t')
    const sent = await Promise.all(Array.from({ length: 50 }, (_, i) => p.send(i, i, { partition: i % 2 })))
    for (const part of [0, 1]) {
      expect(sent.filter((r) => r.partition === part).map((r) => r.offset)).toEqual(
        Array.from({ length: 25 }, (_, i) => i),
      )
    }
    const more = await p.sendBatch([
      { key: 1, value: 1, partition: 0 },
      { key: 2, value: 2, partition: 0 },
    ])
    expect(more.map((r) => r.offset)).toEqual([25, 26])
    expect(await ctx.twain.length('t')).toBe(52)
  })

  it('trim by maxMessages and by offsets is exact; length counts what is left', async () => {
    await ctx.twain.createTopic('t', { partitions: 2 })
    await fill(ctx.twain, 't', 0, 30)
    await fill(ctx.twain, 't', 1, 10)
    expect(await ctx.twain.trim('t', { maxMessages: 8 })).toBe(22 + 2)
    expect((await ctx.twain.describeTopic('t')).offsets).toEqual([
      { partition: 0, start: 22, end: 30 },
      { partition: 1, start: 2, end: 10 },
    ])
    expect(await ctx.twain.trim('t', { before: { 1: 5 } })).toBe(3)
    expect(await ctx.twain.trim('t', { before: { 1: 3 } })).toBe(0)
    expect(await ctx.twain.length('t')).toBe(8 + 5)
    const p1: number[] = []
    for await (const m of ctx.twain.history('t', { partition: 1 })) p1.push(m.offset)
    expect(p1).toEqual([5, 6, 7, 8, 9])
    await expect(ctx.twain.trim('t', { before: { 7: 1 } })).rejects.toBeInstanceOf(InvalidArgumentError)
    // offsets go on after the trimmed range
    expect((await fill(ctx.twain, 't', 1, 1))[0]?.offset).toBe(10)
  })

  it('retention.maxMessages keeps about that many per partition after writes', async () => {
    await ctx.twain.createTopic('t', { retention: { maxMessages: 10 } })
    for (let i = 0; i < 5; i++) await fill(ctx.twain, 't', 0, 20, `b${i}-`)
    await ctx.twain.producer('t').flush()
    // The file backend trims whole segments after a roll; Redis trims exactly on every write.
    const o = (await ctx.twain.describeTopic('t')).offsets[0]
    expect(o?.end).toBe(100)
    if (kind.redis) expect(o?.start).toBe(90)
    else expect(o?.start).toBeGreaterThanOrEqual(0)
  })
})
