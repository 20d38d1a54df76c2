import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { open, type Consumer, type GroupMessage, type Message, type Twain } from '../../../src/index.js'
import { until } from '../../helpers/spawn.js'
import { pythonAvailable, pythonDecode, runScript, tempRoot } from '../../helpers/twainmq.js'
import { collect } from '../../unit/helpers.js'

const chunkFiles = (dir: string, topic: string) =>
  readdirSync(join(dir, topic))
    .filter((n) => n.endsWith('.tmf'))
    .sort()
const FAST = { sessionTimeoutMs: 2000, heartbeatIntervalMs: 200, commitIntervalMs: 100 }

/** Collect a stream's messages in the background until `stop()`. */
function collector(it: AsyncIterable<Message>): { got: Message[]; stop: () => Promise<void> } {
  const got: Message[] = []
  const iter = it[Symbol.asyncIterator]()
  let done = false
  const loop = (async () => {
    while (!done) {
      const r = await iter.next()
      if (r.done) return
      got.push(r.value)
    }
  })()
  return {
    got,
    stop: async () => {
      done = true
      await iter.return?.()
      await loop.catch(() => undefined)
    },
  }
}

describe('tailing TwainMQ topics', () => {
  let root: ReturnType<typeof tempRoot>
  let twain: Twain
  beforeEach(async () => {
    root = tempRoot(false)
    twain = await open(root.dir, { format: 'twainmq-v1', pollMs: 50 })
  })
  afterEach(async () => {
    vi.useRealTimers()
    await twain.close()
    root.remove()
  })

  it("follows new lines and the UTC day roll-over into a new chunk file (ours and a Python producer's)", async () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(Date.UTC(2024, 0, 1, 23, 59, 59, 500))
    await twain.createTopic('roll')
    const reader = await open(root.dir, { pollMs: 50 }) // another instance, auto-detected
    const tail = collector(reader.tail('roll', { from: 'start' }))
    try {
      const p = twain.producer('roll')
      for (let i = 0; i < 3; i++) await p.send(i, `day1 ${i}`)
      await until(() => tail.got.length === 3, 5000, 'the first day')
      vi.setSystemTime(Date.UTC(2024, 0, 2, 0, 0, 0, 100)) // midnight UTC passed
      expect((await p.send(3, 'day2 3')).offset).toBe(3)
      expect((await p.send(4, 'day2 4')).offset).toBe(4)
      expect(chunkFiles(root.dir, 'roll')).toEqual(['0-20240101_0.tmf', '0-20240102_3.tmf'])
      await until(() => tail.got.length === 5, 5000, 'the roll-over')
      if (pythonAvailable()) {
        // A Python producer on day 2 appends to our chunk; on day 3 it starts a new one by its own rules.
        runScript([
          'produce',
          root.dir,
          'roll',
          '{"int":"5"}',
          '{"text":"py day2"}',
          String(Date.UTC(2024, 0, 2, 12) / 1000),
        ])
        runScript([
          'produce',
          root.dir,
          'roll',
          '{"int":"6"}',
          '{"text":"py day3"}',
          String(Date.UTC(2024, 0, 3, 1) / 1000),
        ])
        expect(chunkFiles(root.dir, 'roll')).toEqual(['0-20240101_0.tmf', '0-20240102_3.tmf', '0-20240103_6.tmf'])
        await until(() => tail.got.length === 7, 5000, "the Python producer's lines")
        vi.setSystemTime(Date.UTC(2024, 0, 3, 2))
        expect((await p.send(7, 'day3 7')).offset).toBe(7)
        await until(() => tail.got.length === 8, 5000, 'our line after the Python ones')
        expect(pythonDecode(root.dir, 'roll').map((d) => [d.offset, d.text, d.file])).toEqual([
          [0, 'day1 0', '0-20240101_0.tmf'],
          [1, 'day1 1', '0-20240101_0.tmf'],
          [2, 'day1 2', '0-20240101_0.tmf'],
          [3, 'day2 3', '0-20240102_3.tmf'],
          [4, 'day2 4', '0-20240102_3.tmf'],
          [5, 'py day2', '0-20240102_3.tmf'],
          [6, 'py day3', '0-20240103_6.tmf'],
          [7, 'day3 7', '0-20240103_6.tmf'],
        ])
      }
      expect(tail.got.map((m) => m.offset)).toEqual(tail.got.map((_, i) => i))
      expect(tail.got.slice(0, 5).map((m) => m.value)).toEqual(['day1 0', 'day1 1', 'day1 2', 'day2 3', 'day2 4'])
      expect(new Date(tail.got[3]!.timestamp).toISOString()).toBe('2024-01-02T00:00:00.100Z')
    } finally {
      await tail.stop()
      await reader.close()
    }
  })

  it("tails from 'end' only what is written after tail() was called", async () => {
    await twain.createTopic('live', { partitions: 2 })
    const p = twain.producer('live')
    await p.sendBatch(Array.from({ length: 10 }, (_, i) => ({ key: i, value: `old ${i}` })))
    const tail = collector(twain.tail('live'))
    try {
      await p.send(100, 'new 1')
      await p.send(101, 'new 2')
      await until(() => tail.got.length === 2, 5000, 'two new messages')
      expect(tail.got.map((m) => m.value).sort()).toEqual(['new 1', 'new 2'])
    } finally {
      await tail.stop()
    }
  })
})

describe('consumer groups over a TwainMQ topic (our group store, not the TwainMQ group log)', () => {
  let root: ReturnType<typeof tempRoot>
  let twain: Twain
  beforeEach(async () => {
    root = tempRoot(false)
    twain = await open(root.dir, { format: 'twainmq-v1', pollMs: 50 })
  })
  afterEach(async () => {
    await twain.close()
    root.remove()
  })

  it('shares the partitions between two members, consumes every message once, commits, and resumes after restart', async () => {
    await twain.createTopic('jobs', { partitions: 4 })
    const p = twain.producer('jobs')
    await p.sendBatch(Array.from({ length: 200 }, (_, i) => ({ key: i, value: `job ${i}` })))
    const a = twain.consumer('jobs', { group: 'workers', ...FAST })
    const other = await open(root.dir, { pollMs: 50 })
    const b = other.consumer('jobs', { group: 'workers', ...FAST })
    const seen = new Map<string, number>()
    const take = (c: Consumer) => {
      for (const m of c.pollMany(50) as GroupMessage[]) {
        seen.set(`${m.partition}/${m.offset}`, (seen.get(`${m.partition}/${m.offset}`) ?? 0) + 1)
        m.ack()
      }
    }
    try {
      await until(
        () => a.assignments().length + b.assignments().length === 4 && a.assignments().length === 2,
        5000,
        'a balanced assignment',
      )
      await until(
        () => {
          take(a)
          take(b)
          return seen.size === 200
        },
        10_000,
        'every message',
      )
      expect([...seen.values()].every((n) => n === 1)).toBe(true)
      await a.commit()
      await b.commit()
      const d = await twain.describeGroup('workers')
      expect(d.topics.reduce((n, t) => n + t.lag, 0)).toBe(0)
      expect(d.topics.map((t) => t.committed).reduce((x, y) => x + y, 0)).toBe(200)
    } finally {
      await b.close()
      await other.close()
      await a.close()
    }
    expect(readdirSync(root.dir).filter((n) => n.startsWith('--group--'))).toEqual([]) // no TwainMQ group log
    await p.sendBatch(Array.from({ length: 20 }, (_, i) => ({ key: i, value: `late ${i}` })))
    const c = twain.consumer<string>('jobs', { group: 'workers', ...FAST })
    try {
      const got: string[] = []
      await until(
        () => {
          for (const m of c.pollMany(100)) {
            got.push(m.value)
            m.ack()
          }
          return got.length >= 20
        },
        5000,
        'the late messages',
      )
      expect(got.sort()).toEqual(Array.from({ length: 20 }, (_, i) => `late ${i}`).sort())
    } finally {
      await c.close()
    }
  })

  it('delivers a corrupt line to the group with message.error, and commits past it', async () => {
    root.remove()
    root = tempRoot(true)
    const t = await open(root.dir, { pollMs: 50 })
    try {
      const c = t.consumer('damaged', { group: 'g', ...FAST })
      const got: GroupMessage[] = []
      await until(
        () => {
          for (const m of c.pollMany(20)) {
            got.push(m)
            m.ack()
          }
          return got.length >= 8
        },
        5000,
        'the damaged topic',
      )
      expect(got.map((m) => [m.offset, m.error?.name ?? 'ok'])).toEqual([
        [0, 'ok'],
        [1, 'TopicCorruptError'],
        [2, 'ok'],
        [3, 'UnknownMessageTypeError'],
        [4, 'ok'],
        [5, 'TopicCorruptError'],
        [6, 'ok'],
        [7, 'ok'],
      ])
      await c.commit()
      expect((await t.describeGroup('g')).topics[0]).toMatchObject({ committed: 8, end: 8, lag: 0 })
      await c.close()
      expect(await collect(t.history('damaged', { from: 8 }))).toEqual([])
    } finally {
      await t.close()
    }
  })
})
