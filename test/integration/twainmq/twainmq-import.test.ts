import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { TopicExistsError, open, type Message } from '../../../src/index.js'
import { importTwainmqTopic } from '../../../src/compat/twainmq/import.js'
import { runCli as cli } from '../../helpers/cli.js'
import { expected, tempRoot } from '../../helpers/twainmq.js'
import { collect } from '../../unit/helpers.js'

const TOPICS = ['orders', 'users', 'sensors', 'tiny', 'wide', 'damaged', '--group--g1']

/** What both sides must agree on for one message. */
const essence = (m: Message) => ({
  partition: m.partition,
  offset: m.offset,
  key: m.key,
  timestamp: m.timestamp,
  value: m.value,
  type: m.type,
})

/** A value as JSON.parse would give it back (bigints become the nearest number). */
function lossy(v: unknown): unknown {
  if (typeof v === 'bigint') return Number(v)
  if (Array.isArray(v)) return v.map(lossy)
  if (v && typeof v === 'object' && !Buffer.isBuffer(v))
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, lossy(x)]))
  return v
}

describe('import-twainmq: a TwainMQ topic copied into a native root', () => {
  let src: ReturnType<typeof tempRoot>
  let dest: string
  beforeEach(() => {
    src = tempRoot()
    dest = mkdtempSync(join(tmpdir(), 'twainmq-import-'))
  })
  afterEach(() => {
    src.remove()
    rmSync(dest, { recursive: true, force: true })
  })

  it('the CLI copies every topic preserving partitions, offsets, timestamps, keys, values and types', async () => {
    for (const topic of TOPICS) {
      // `--` ends the options, so a topic named like TwainMQ's group topics (`--group--g1`) is an argument.
      const r = await cli(['--url', dest, 'import-twainmq', '--', src.dir, topic])
      expect(r.stderr).toBe('')
      expect(r.code).toBe(0)
      expect(r.stdout).toMatch(new RegExp(`^imported \\d+ messages? of TwainMQ topic ${topic}`))
    }
    expect(readdirSync(dest).filter((n) => n.endsWith('.twc'))).toEqual([]) // the copy is native
    const py = await open(src.dir)
    const native = await open(dest)
    try {
      expect(await native.listTopics()).toEqual([...TOPICS].sort())
      for (const topic of TOPICS) {
        const a = await py.describeTopic(topic)
        const b = await native.describeTopic(topic)
        expect({ ...b, retention: {} }).toEqual(a)
        const before = await collect(py.history(topic))
        const after = await collect(native.history(topic))
        const want = expected()[topic]!
        expect(after.length).toBe(want.ends.reduce((x, y) => x + y, 0))
        // Corrupt lines are kept as their raw bytes; an unknown type id keeps its JSON without a type.
        // The native reader parses JSON with JSON.parse (src/core/values.ts), so integers beyond 2^53
        // come back as the nearest double there; their exact digits are on disk (checked below).
        expect(after.map(essence)).toEqual(before.map((m) => ({ ...essence(m), value: lossy(m.value) })))
      }
      const segments = (topic: string, p: number) =>
        readdirSync(join(dest, topic, String(p)))
          .filter((n) => n.endsWith('.seg'))
          .map((n) => readFileSync(join(dest, topic, String(p), n), 'latin1'))
          .join('')
      const ordersOnDisk = [0, 1, 2].map((p) => segments('orders', p)).join('')
      expect(ordersOnDisk).toContain('"tag":18204373000982585223')
      expect(ordersOnDisk).toContain('"neg":-12345678901234567890')
      expect(segments('--group--g1', 0)).toContain('{"tag":18204373000982585223}')
      const damaged = await collect(native.history('damaged'))
      expect(damaged[1]!.headers['x-twainmq-error']).toMatch(/Line 2 of .*0-20240101_0\.tmf/)
      expect(damaged[3]!.headers['x-twainmq-type-id']).toBe('9')
      expect(damaged[3]!.value).toEqual({ unknown: true })
    } finally {
      await py.close()
      await native.close()
    }
  })

  it('keeps offsets of a partition whose first chunks are gone, and reports progress', async () => {
    // Remove the first day of orders/partition 0: its first chunk now starts past 0.
    const dir = join(src.dir, 'orders')
    rmSync(join(dir, '0-20240101_0.tmf')) // the empty 0-20240102_9.tmf is now the first chunk
    const progress: Array<[number, number]> = []
    const r = await importTwainmqTopic(src.dir, 'orders', dest, {
      as: 'orders-copy',
      batch: 2,
      onProgress: (d, t) => progress.push([d, t]),
    })
    expect(r).toMatchObject({ topic: 'orders-copy', partitions: 3, corrupt: 0, unknownTypes: 0, missing: 0 })
    const native = await open(dest)
    try {
      const info = await native.describeTopic('orders-copy')
      expect(info.offsets[0]).toEqual({ partition: 0, start: 9, end: 12 })
      const p0 = await collect(native.history('orders-copy', { partition: 0 }))
      expect(p0.map((m) => m.offset)).toEqual([9, 10, 11])
      expect(p0.map((m) => Math.round(m.timestamp * 1000))).toEqual(
        expected()
          .orders!.messages[0]!.slice(9)
          .map((e) => e.us),
      )
    } finally {
      await native.close()
    }
    expect(progress.length).toBeGreaterThan(3)
    expect(progress[progress.length - 1]).toEqual([r.messages, r.messages])
    await expect(importTwainmqTopic(src.dir, 'orders', dest, { as: 'orders-copy' })).rejects.toThrow(TopicExistsError)
  })

  it('refuses a missing topic and a non-directory target (exit codes 1 and 2)', async () => {
    const missing = await cli(['--url', dest, 'import-twainmq', src.dir, 'nope'])
    expect(missing.code).toBe(1)
    expect(missing.stderr).toMatch(/^ERR_TOPIC_NOT_FOUND: /)
    const redis = await cli(['--url', 'redis://127.0.0.1:1', 'import-twainmq', src.dir, 'orders'])
    expect(redis.code).toBe(2)
    expect(redis.stderr).toMatch(/^ERR_USAGE: import-twainmq copies into a directory/)
  })
})
