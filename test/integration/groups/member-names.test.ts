// A member name is one live consumer (issue 10): a second consumer of this instance reusing a live
// member's name in the same group is refused synchronously, in both modes and on both backends, and
// the first one goes on untouched; on Redis, two instances (or processes) with one shared name never
// both process everything.
import { Redis } from 'ioredis'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import {
  FencedError,
  InvalidArgumentError,
  open,
  type GroupMessage,
  type SharedConsumer,
  type Twain,
} from '../../../src/index.js'
import { RedisServer } from '../../helpers/redis-server.js'
import { until } from '../../helpers/spawn.js'
import { tempDir } from '../../helpers/tmp.js'

let server: RedisServer
let admin: Redis
let n = 0
const dirs: Array<() => void> = []
const tmpRoot = (): string => {
  const t = tempDir('twainmq-names-')
  dirs.push(t.remove)
  return t.dir
}
const opened: Twain[] = []

beforeAll(async () => {
  server = await RedisServer.start()
  admin = new Redis({ port: server.port, host: '127.0.0.1', protocol: 2 })
})
afterAll(async () => {
  admin.disconnect()
  await server.destroy()
})
afterEach(async () => {
  await Promise.all(opened.splice(0).map((t) => t.close().catch(() => undefined)))
  for (const remove of dirs.splice(0)) remove()
})

async function openRedis(prefix: string): Promise<Twain> {
  const t = await open(server.url, { prefix })
  opened.push(t)
  return t
}

async function openFile(root: string): Promise<Twain> {
  const t = await open(root)
  opened.push(t)
  return t
}

async function fill(twain: Twain, topic: string, count: number, from = 0): Promise<void> {
  await twain
    .producer<string>(topic)
    .sendBatch(Array.from({ length: count }, (_, i) => ({ key: from + i, value: `m${from + i}` })))
}

/** Iterate `c` in the background, acking everything, recording offsets in `seen`, until `stop` aborts. */
function drain<V>(
  c: SharedConsumer<V> | AsyncIterable<GroupMessage<V>>,
  seen: number[],
  stop: AbortSignal,
): Promise<void> {
  return (async () => {
    const it = c[Symbol.asyncIterator]()
    stop.addEventListener('abort', () => void it.return?.(), { once: true })
    for (;;) {
      const r = await it.next()
      if (r.done) return
      seen.push(r.value.offset)
      r.value.ack()
    }
  })()
}

describe('a live member name is refused synchronously in the same instance', () => {
  it('shared mode (Redis): the second consumer throws InvalidArgumentError naming group and name; the first delivers every message once', async () => {
    const twain = await openRedis(`names${n++}:`)
    await twain.createTopic('t')
    await fill(twain, 't', 200)
    const first = twain.consumer<string>('t', { group: 'g', mode: 'shared', name: 'worker', maxInFlight: 50 })
    const seen: number[] = []
    const stop = new AbortController()
    const running = drain(first, seen, stop.signal)
    await until(() => seen.length > 0, 5000, 'the first member to get messages')
    let refused: unknown
    const seen2: number[] = []
    let running2: Promise<void> | undefined
    try {
      // On the old code this was accepted, and both members delivered every message.
      running2 = drain(
        twain.consumer<string>('t', { group: 'g', mode: 'shared', name: 'worker' }),
        seen2,
        stop.signal,
      ).catch(() => undefined)
    } catch (e) {
      refused = e
    }
    await until(() => seen.length + seen2.length >= 200, 10_000, 'every message')
    stop.abort()
    await Promise.all([running, running2])
    expect({ first: seen.length, second: seen2.length }).toEqual({ first: 200, second: 0 })
    expect(refused).toBeInstanceOf(InvalidArgumentError)
    expect((refused as Error).message).toMatch(/"worker".*"g"|"g".*"worker"/)
    expect(seen.length).toBe(200)
    expect(new Set(seen).size).toBe(200)
    await first.close()
    // Free again once the first is closed.
    const again = twain.consumer<string>('t', { group: 'g', mode: 'shared', name: 'worker' })
    await again.rebalance()
    expect(again.assignments()).toHaveLength(1)
  })

  it('partitioned mode, both backends: the second consumer of a name throws; another group or name is fine', async () => {
    for (const twain of [await openRedis(`names${n++}:`), await openFile(tmpRoot())]) {
      await twain.createTopic('t', { partitions: 2 })
      const first = twain.consumer('t', { group: 'g', name: 'worker' })
      await first.rebalance()
      expect(() => twain.consumer('t', { group: 'g', name: 'worker' })).toThrow(InvalidArgumentError)
      expect(() => twain.consumer('t', { group: 'g', name: 'worker', mode: 'partitioned' })).toThrow(
        /member name "worker" .*group "g"/i,
      )
      const other = twain.consumer('t', { group: 'g2', name: 'worker' })
      const unnamed = [twain.consumer('t', { group: 'g' }), twain.consumer('t', { group: 'g' })]
      await first.rebalance()
      expect(first.assignments().length).toBeGreaterThan(0)
      await Promise.all([first.close(), other.close(), ...unnamed.map((c) => c.close())])
      const again = twain.consumer('t', { group: 'g', name: 'worker' })
      await again.close()
    }
  })

  it('the file backend refuses mode shared before the name check (no shared groups there)', async () => {
    const twain = await openFile(tmpRoot())
    await twain.createTopic('t')
    expect(() => twain.consumer('t', { group: 'g', mode: 'shared', name: 'x' })).toThrow(/needs the Redis backend/)
  })
})

describe('one shared name in two instances (two processes)', () => {
  it('a second instance using a live name is refused; the first goes on alone', async () => {
    const prefix = `names${n++}:`
    const a = await openRedis(prefix)
    const b = await openRedis(prefix)
    await a.createTopic('t')
    await fill(a, 't', 100)
    const first = a.consumer<string>('t', { group: 'g', mode: 'shared', name: 'worker', maxInFlight: 20 })
    const seenA: number[] = []
    const stop = new AbortController()
    const runA = drain(first, seenA, stop.signal)
    await until(() => seenA.length > 0, 5000, 'the first member to get messages')
    const second = b.consumer<string>('t', { group: 'g', mode: 'shared', name: 'worker' })
    const seenB: number[] = []
    const runB = drain(second, seenB, stop.signal).then(
      () => undefined,
      (e: unknown) => e,
    )
    // Refused when it joins (its iteration throws); on the old code it delivered instead.
    const refused = await Promise.race([
      runB,
      until(() => seenB.length > 0, 10_000, 'the second member to fail or deliver').then(() => 'delivered'),
    ])
    await until(() => new Set([...seenA, ...seenB]).size >= 100, 10_000, 'every message')
    stop.abort()
    await Promise.all([runB, runA])
    // On the old code both delivered every message (the second re-read what the first held).
    expect({ first: seenA.length, second: seenB.length }).toEqual({ first: 100, second: 0 })
    expect(new Set(seenA).size).toBe(100)
    expect(refused).toBeInstanceOf(InvalidArgumentError)
    expect((refused as Error).message).toMatch(/"worker" is in use in shared group "g" by a live member \(pid/)
  })

  it('a member silent past its session whose name another member took stops with FencedError at its next heartbeat, and leaves the name to the other', async () => {
    const prefix = `names${n++}:`
    const a = await openRedis(prefix)
    const b = await openRedis(prefix)
    await a.createTopic('t')
    await fill(a, 't', 50)
    const opts = {
      group: 'g',
      mode: 'shared',
      name: 'worker',
      maxInFlight: 10,
      heartbeatIntervalMs: 50,
      sessionTimeoutMs: 60_000,
      drainTimeoutMs: 100,
    } as const
    const stale = a.consumer<string>('t', opts)
    const held: number[] = []
    const it1 = stale[Symbol.asyncIterator]()
    for (let i = 0; i < 5; i++) held.push(((await it1.next()).value as GroupMessage<string>).offset) // delivered, never acked
    // As if its process had stalled past the session timeout: its registration expires.
    await admin.zadd(`${prefix}group:{g}:alive`, 1, 'worker')
    const fresh = b.consumer<string>('t', opts)
    const seen: number[] = []
    const stop = new AbortController()
    const running = drain(fresh, seen, stop.signal)
    // It goes on with what it had buffered (it holds at most maxInFlight, never acked), then stops.
    const failure = await (async () => {
      for (;;) held.push(((await it1.next()).value as GroupMessage<string>).offset)
    })().catch((e: unknown) => e)
    expect(failure).toBeInstanceOf(FencedError)
    expect((failure as Error).message).toMatch(/"worker" of shared group "g" was replaced/)
    expect(held.length).toBeLessThanOrEqual(10)
    await until(() => new Set(seen).size === 50, 10_000, 'the new member to process everything')
    stop.abort()
    await running
    // The replaced member left the name alone: the new one is still registered, and holds nothing unacked.
    await until(async () => (await b.describeGroup('g')).topics[0]?.pending === 0, 5000, 'no pending entries')
    expect((await b.describeGroup('g')).members.map((m) => m.id)).toEqual(['worker'])
    expect(held.every((o) => seen.includes(o))).toBe(true)
  })
})
