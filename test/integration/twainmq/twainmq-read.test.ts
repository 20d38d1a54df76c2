import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  TopicCorruptError,
  TopicNotFoundError,
  UnknownMessageTypeError,
  open,
  type Message,
  type Twain,
} from '../../../src/index.js'
import { stringifyJson } from '../../../src/compat/twainmq/json64.js'
import { msToSeconds } from '../../../src/compat/twainmq/line-codec.js'
import { collect, takeN } from '../../unit/helpers.js'
import { expected, tempRoot, type ExpectedMessage } from '../../helpers/twainmq.js'

const want = expected()
const USER_TOPICS = ['damaged', 'orders', 'sensors', 'tiny', 'users', 'wide']

/** Assert that a message read by twainmq is exactly what the fixture generator wrote. */
function check(m: Message, e: ExpectedMessage, width: number): void {
  const where = `${m.topic}/${m.partition}@${m.offset}`
  expect(m.offset, where).toBe(e.offset)
  expect(m.key, where).toEqual(width === 8 ? BigInt(e.key) : e.key)
  expect(m.timestamp, where).toBe(e.us / 1000) // the microsecond Python stored, in ms
  expect(Math.round(m.timestamp * 1000), where).toBe(e.us)
  expect(msToSeconds(m.timestamp), where).toBe(e.seconds) // written back as the very float Python wrote
  expect(m.error, where).toBeUndefined()
  if (e.kind === 'text') expect(m.value, where).toBe(e.text)
  else if (e.kind === 'bytes') {
    expect(Buffer.isBuffer(m.value), where).toBe(true)
    expect((m.value as Buffer).toString('hex'), where).toBe(e.hex)
  } else {
    expect(m.type, where).toBe(e.type)
    // Python's json.dumps(separators=(",",":")) of the same object, 64-bit integers included.
    expect(stringifyJson(m.value), where).toBe(e.json)
  }
  if (e.kind !== 'typed') expect(m.type, where).toBeUndefined()
}

describe('reading a root written by the Python TwainMQ rules (test/fixtures/twainmq)', () => {
  let root: ReturnType<typeof tempRoot>
  let twain: Twain
  beforeEach(async () => {
    root = tempRoot()
    twain = await open(root.dir) // auto-detected: the root has .twc files
  })
  afterEach(async () => {
    await twain.close()
    root.remove()
  })

  it('lists the TwainMQ topics (not group topics, not configs whose directory Python deleted)', async () => {
    expect(await twain.listTopics()).toEqual(USER_TOPICS)
    expect(await twain.topicExists('ghost')).toBe(false)
    expect(await twain.topicExists('orders')).toBe(true)
    await expect(twain.describeTopic('ghost')).rejects.toThrow(TopicNotFoundError)
  })

  it("creates a native topic over a config Python's delete_topic left behind, and routes it as native at once", async () => {
    expect(await twain.topicExists('ghost')).toBe(false)
    await twain.createTopic('ghost', { keyType: 'string' })
    await twain.producer('ghost').send('k', 'v', { headers: { native: 'yes' } })
    expect((await collect(twain.history('ghost')))[0]).toMatchObject({
      key: 'k',
      value: 'v',
      headers: { native: 'yes' },
    })
    expect(await twain.listTopics()).toEqual([...USER_TOPICS, 'ghost'].sort())
  })

  it('describes every topic: key type, partitions, message types by id, start and end offsets', async () => {
    for (const name of USER_TOPICS) {
      const t = want[name]!
      const info = await twain.describeTopic(name)
      expect(info.partitions).toBe(t.partitions)
      expect(info.keyType).toBe({ 1: 'u8', 2: 'u16', 4: 'u32', 8: 'u64' }[t.key_width] ?? `char${-t.key_width}`)
      expect(info.messageTypes).toEqual(
        Object.entries(t.message_types)
          .sort((a, b) => a[1] - b[1])
          .map(([n]) => n),
      )
      expect(info.offsets).toEqual(t.ends.map((end, partition) => ({ partition, start: 0, end })))
      expect(await twain.length(name)).toBe(t.ends.reduce((a, b) => a + b, 0))
    }
  })

  it('reads every message back exactly: offset, key, timestamp to the µs, value kind and bytes, type', async () => {
    let n = 0
    for (const name of USER_TOPICS.filter((t) => t !== 'damaged')) {
      const t = want[name]!
      for (let p = 0; p < t.partitions; p++) {
        const got = await collect(twain.history(name, { partition: p }))
        expect(got.map((m) => m.offset)).toEqual(t.messages[p]!.map((e) => e.offset))
        got.forEach((m, i) => check(m, t.messages[p]![i]!, t.key_width))
        n += got.length
      }
    }
    expect(n).toBeGreaterThan(60)
  })

  it('continues offsets across day chunks, through empty day chunks that share their start offset', async () => {
    const files = want.orders!.files
    expect(files).toContain('0-20240102_9.tmf') // empty day …
    expect(files).toContain('0-20240103_9.tmf') // … sharing its start with the next day
    const got = await collect(twain.history('orders', { partition: 0, from: 7 }))
    expect(got.map((m) => m.offset)).toEqual([7, 8, 9, 10, 11])
    check(got[2]!, want.orders!.messages[0]![9]!, 2)
    expect(new Date(got[1]!.timestamp).toISOString().slice(0, 10)).toBe('2024-01-01')
    expect(new Date(got[2]!.timestamp).toISOString().slice(0, 10)).toBe('2024-01-03')
  })

  it('seeks by time into the right day chunk', async () => {
    const msgs = want.orders!.messages[1]!
    const target = msgs[3]!
    const got = await collect(twain.history('orders', { partition: 1, from: { time: target.us / 1000 } }))
    expect(got[0]!.offset).toBe(target.offset)
    const none = await collect(twain.history('orders', { partition: 1, from: { time: Date.UTC(2030, 0, 1) } }))
    expect(none).toEqual([])
  })

  it('reads newest-first with reverse and limit', async () => {
    const got = await collect(twain.history('orders', { partition: 2, reverse: true, limit: 3 }))
    const all = want.orders!.messages[2]!
    expect(got.map((m) => m.offset)).toEqual([all.length - 1, all.length - 2, all.length - 3])
  })

  it('reports a corrupt line with its file and line number, keeps it at its offset, and does not shift later offsets', async () => {
    const got = await collect(twain.history('damaged'))
    expect(got.map((m) => m.offset)).toEqual([0, 1, 2, 3, 4, 5, 6, 7])
    expect(got.map((m) => (m.error ? m.error.name : m.value))).toEqual([
      'first',
      'TopicCorruptError',
      'third',
      'UnknownMessageTypeError',
      'fifth',
      'TopicCorruptError',
      'after the torn line',
      'last',
    ])
    const bad = got[1]!
    expect(bad.error).toBeInstanceOf(TopicCorruptError)
    expect(bad.error!.message).toMatch(/Line 2 of .*damaged\/0-20240101_0\.tmf \(offset 1 /)
    expect(bad.error).toMatchObject({ line: 2, file: expect.stringMatching(/0-20240101_0\.tmf$/) })
    expect(Buffer.isBuffer(bad.value)).toBe(true) // the raw line
    expect(bad.key).toBe(2) // the KEY field still decoded
    // Offsets after the bad line are the true line indexes (Python TwainMQ shifts them by one).
    expect(got[2]!.key).toBe(3)
    const torn = got[5]!
    expect(torn.error).toBeInstanceOf(TopicCorruptError)
    expect(torn.error!.message).toMatch(/Line 6 of .*0-20240101_0\.tmf/)
  })

  it('gives an unknown type id an UnknownMessageTypeError with the offset, without stopping the stream', async () => {
    const got = await collect(twain.history('damaged', { from: 3, to: 5 }))
    expect(got).toHaveLength(2)
    const m = got[0]!
    expect(m.error).toBeInstanceOf(UnknownMessageTypeError)
    expect(m.error!.message).toMatch(/offset 3 .*type id 9/)
    expect(m.value).toEqual({ unknown: true })
    expect(m.type).toBeUndefined()
    expect(got[1]!.value).toBe('fifth')
  })

  it('tails a topic from the start and delivers corrupt lines in order with the others', async () => {
    const got = await takeN(twain.tail('damaged', { from: 'start' }), 8)
    expect(got.map((m) => m.offset)).toEqual([0, 1, 2, 3, 4, 5, 6, 7])
  })

  it('reads a TwainMQ group topic by name, with its 64-bit join tag exact', async () => {
    const got = await collect(twain.history('--group--g1'))
    expect(got.map((m) => m.type)).toEqual(['~~TWAIN~~COMMIT', '~~TWAIN~~JOINED', '~~TWAIN~~ENDREBAL'])
    expect(got[1]!.value).toEqual({ tag: 18204373000982585223n })
    expect(got[0]!.value).toEqual({
      partition_offsets: [
        [0, 0],
        [1, 0],
        [2, 0],
      ],
    })
  })

  it('opens the same root with format twainmq-v1 and with format native alike for reading', async () => {
    for (const format of ['twainmq-v1', 'native'] as const) {
      const t = await open(root.dir, { format })
      try {
        expect(await t.listTopics()).toEqual(USER_TOPICS)
        const got = await collect(t.history('users', { partition: 1 }))
        got.forEach((m, i) => check(m, want.users!.messages[1]![i]!, -8))
      } finally {
        await t.close()
      }
    }
  })
})
