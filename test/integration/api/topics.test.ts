import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import {
  InvalidArgumentError,
  InvalidTopicNameError,
  TopicExistsError,
  TopicNotFoundError,
  open,
} from '../../../src/index.js'
import { collect } from '../../unit/helpers.js'
import { useFileStore } from '../../helpers/file-store.js'

async function rejection(p: Promise<unknown> | (() => unknown)): Promise<unknown> {
  try {
    await (typeof p === 'function' ? p() : p)
  } catch (e) {
    return e
  }
  throw new Error('expected a rejection')
}

describe('topics', () => {
  const store = useFileStore()

  it('createTopic returns the TopicInfo with the documented defaults', async () => {
    const info = await store.twain.createTopic('orders')
    expect(info).toEqual({
      name: 'orders',
      partitions: 1,
      keyType: 'u16',
      messageTypes: [],
      retention: {},
      maxMessageBytes: 1024 * 1024,
      attributes: {},
      compact: false,
      offsets: [{ partition: 0, start: 0, end: 0 }],
    })
    expect(await store.twain.describeTopic('orders')).toEqual(info)
  })

  it('createTopic keeps the given options', async () => {
    const info = await store.twain.createTopic('o2', {
      partitions: 3,
      keyType: 'string',
      messageTypes: ['A'],
      retention: { maxMessages: 5 },
      maxMessageBytes: 500,
    })
    expect(info).toMatchObject({
      partitions: 3,
      keyType: 'string',
      messageTypes: ['A'],
      retention: { maxMessages: 5 },
      maxMessageBytes: 500,
    })
    expect(info.offsets).toEqual([0, 1, 2].map((partition) => ({ partition, start: 0, end: 0 })))
  })

  const VALID = ['a', 'Orders', 'A-b_c.d', '0', 'x.', '-x', '_x', 'a..b', 'x'.repeat(200)]
  it('accepts valid topic names and each exists afterwards (topicExists, describeTopic)', async () => {
    for (const name of VALID) {
      await store.twain.createTopic(name)
      expect(await store.twain.topicExists(name)).toBe(true)
      expect((await store.twain.describeTopic(name)).name).toBe(name)
    }
  })

  it('listTopics lists every created topic, sorted', async () => {
    for (const name of VALID) await store.twain.createTopic(name)
    expect(await store.twain.listTopics()).toEqual([...VALID].sort())
  })

  it('listTopics includes a valid topic name that starts with "." (only "__" names are internal)', async () => {
    await store.twain.createTopic('.hidden')
    expect(await store.twain.topicExists('.hidden')).toBe(true)
    expect(await store.twain.listTopics()).toContain('.hidden')
  })

  const INVALID = ['../x', '.', '..', '', 'a/b', 'a\\b', 'x'.repeat(201), '__x', '__groups', 'sp ace', 'ü', 'a\0b']
  for (const name of INVALID) {
    it(`rejects topic name ${JSON.stringify(name.length > 20 ? `${name.slice(0, 10)}…(${name.length})` : name)} with InvalidTopicNameError naming it`, async () => {
      const err = await rejection(store.twain.createTopic(name))
      expect(err).toBeInstanceOf(InvalidTopicNameError)
      expect((err as InvalidTopicNameError).code).toBe('ERR_INVALID_TOPIC_NAME')
      expect((err as Error).message).toContain(JSON.stringify(name))
      // the same check guards every other entry point
      await expect(store.twain.describeTopic(name)).rejects.toBeInstanceOf(InvalidTopicNameError)
      await expect(store.twain.deleteTopic(name)).rejects.toBeInstanceOf(InvalidTopicNameError)
      await expect(store.twain.topicExists(name)).rejects.toBeInstanceOf(InvalidTopicNameError)
      expect(() => store.twain.producer(name)).toThrow(InvalidTopicNameError)
      expect(() => store.twain.history(name)).toThrow(InvalidTopicNameError)
      expect(() => store.twain.tail(name)).toThrow(InvalidTopicNameError)
    })
  }

  it('never creates anything outside the root for a path-like name', async () => {
    await rejection(store.twain.createTopic('../escape'))
    expect(fs.existsSync(path.join(store.dir, '..', 'escape'))).toBe(false)
    expect(await store.twain.listTopics()).toEqual([])
  })

  for (const partitions of [0, 10001, 1.5, -1, Number.NaN, '2' as unknown as number]) {
    it(`rejects partitions: ${String(partitions)} with InvalidArgumentError naming the value`, async () => {
      const err = await rejection(store.twain.createTopic('p', { partitions }))
      expect(err).toBeInstanceOf(InvalidArgumentError)
      expect((err as Error).message).toContain('partitions')
      expect((err as Error).message).toContain(String(partitions))
      expect(await store.twain.topicExists('p')).toBe(false)
    })
  }

  it('rejects out-of-range maxMessageBytes and retention with InvalidArgumentError', async () => {
    await expect(store.twain.createTopic('m', { maxMessageBytes: 0 })).rejects.toBeInstanceOf(InvalidArgumentError)
    await expect(store.twain.createTopic('m', { retention: { maxMessages: -1 } })).rejects.toBeInstanceOf(
      InvalidArgumentError,
    )
    await expect(store.twain.createTopic('m', { retention: { bogus: 1 } as never })).rejects.toBeInstanceOf(
      InvalidArgumentError,
    )
    expect(await store.twain.topicExists('m')).toBe(false)
  })

  it('rejects creating an existing topic with TopicExistsError naming it, keeping the original', async () => {
    await store.twain.createTopic('dup', { partitions: 2 })
    await store.twain.producer('dup').send(1, 'keep')
    const err = await rejection(store.twain.createTopic('dup', { partitions: 5 }))
    expect(err).toBeInstanceOf(TopicExistsError)
    expect((err as Error).message).toContain('dup')
    expect((await store.twain.describeTopic('dup')).partitions).toBe(2)
    expect(await store.twain.length('dup')).toBe(1)
  })

  it('of two concurrent creates of one name exactly one wins', async () => {
    const other = await open(store.dir, { clientId: 'other' })
    try {
      const results = await Promise.allSettled([store.twain.createTopic('race'), other.createTopic('race')])
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1)
      const lost = results.find((r) => r.status === 'rejected') as PromiseRejectedResult
      expect(lost.reason).toBeInstanceOf(TopicExistsError)
    } finally {
      await other.close()
    }
  })

  describe('a missing topic', () => {
    const expectNotFound = (err: unknown) => {
      expect(err).toBeInstanceOf(TopicNotFoundError)
      expect((err as TopicNotFoundError).code).toBe('ERR_TOPIC_NOT_FOUND')
      expect((err as Error).message).toContain('nope')
    }
    it('describeTopic → TopicNotFoundError naming it', async () =>
      expectNotFound(await rejection(store.twain.describeTopic('nope'))))
    it('deleteTopic → TopicNotFoundError naming it', async () =>
      expectNotFound(await rejection(store.twain.deleteTopic('nope'))))
    it('history → TopicNotFoundError naming it when iterated', async () =>
      expectNotFound(await rejection(collect(store.twain.history('nope')))))
    it('producer.send → TopicNotFoundError naming it', async () =>
      expectNotFound(await rejection(store.twain.producer('nope').send(1, 'x'))))
    it('producer.sendBatch → TopicNotFoundError naming it', async () =>
      expectNotFound(await rejection(store.twain.producer('nope').sendBatch([{ key: 1, value: 'x' }]))))
    it('length → TopicNotFoundError naming it', async () => expectNotFound(await rejection(store.twain.length('nope'))))
    it('trim → TopicNotFoundError naming it', async () =>
      expectNotFound(await rejection(store.twain.trim('nope', { maxMessages: 1 }))))
    it('tail → TopicNotFoundError naming it when iterated', async () =>
      expectNotFound(await rejection(collect(store.twain.tail('nope')))))
    it('topicExists → false', async () => expect(await store.twain.topicExists('nope')).toBe(false))
  })

  it('deleteTopic removes the topic and its data; it can be re-created empty', async () => {
    await store.twain.createTopic('gone', { partitions: 2 })
    await store.twain.producer('gone').send(1, 'x')
    await store.twain.deleteTopic('gone')
    expect(await store.twain.topicExists('gone')).toBe(false)
    expect(await store.twain.listTopics()).toEqual([])
    expect(fs.existsSync(path.join(store.dir, 'gone'))).toBe(false)
    await expect(store.twain.deleteTopic('gone')).rejects.toBeInstanceOf(TopicNotFoundError)
    await store.twain.createTopic('gone')
    expect(await store.twain.length('gone')).toBe(0)
    expect(await store.twain.producer('gone').send(1, 'again')).toEqual({ partition: 0, offset: 0 })
  })

  it('a producer that wrote before deleteTopic rejects later sends with TopicNotFoundError (not a retriable BackendError)', async () => {
    await store.twain.createTopic('gone')
    const p = store.twain.producer('gone')
    await p.send(1, 'x')
    await store.twain.deleteTopic('gone')
    const err = await rejection(p.send(1, 'after delete'))
    expect(err).toBeInstanceOf(TopicNotFoundError)
    expect((err as TopicNotFoundError).retriable).toBe(false)
    expect(await store.twain.topicExists('gone')).toBe(false)
  })

  it('sees a topic deleted by another instance as missing', async () => {
    await store.twain.createTopic('shared')
    await store.twain.producer('shared').send(1, 'x')
    const other = await open(store.dir, { clientId: 'other' })
    try {
      await other.deleteTopic('shared')
    } finally {
      await other.close()
    }
    expect(await store.twain.topicExists('shared')).toBe(false)
    await expect(store.twain.describeTopic('shared')).rejects.toBeInstanceOf(TopicNotFoundError)
  })
})
