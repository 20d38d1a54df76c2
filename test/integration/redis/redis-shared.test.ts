// Shared groups on Redis (`mode: 'shared'`, DESIGN §3.6/§6): competing consumers over XREADGROUP,
// claims from dead members, recovery of a restarted member's own entries, slow members, poison
// messages, trimmed pending entries, nack/release, admin. Each file runs a private redis-server.
import { Redis } from 'ioredis'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { RedisBackend } from '../../../src/backends/redis/redis-backend.js'
import {
  FencedError,
  InvalidArgumentError,
  open,
  type TwainError,
  type GroupMessage,
  type SharedConsumer,
  type Twain,
} from '../../../src/index.js'
import { RedisServer } from '../../helpers/redis-server.js'
import { exited, lines, spawnChild, until } from '../../helpers/spawn.js'
import { sleep } from '../../helpers/wait.js'
import { blockedClients } from '../../helpers/waiting-reads.js'
import { backendOf } from '../../../src/facade/twain.js'

let server: RedisServer
let admin: Redis
let n = 0
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
})

/** A fresh key prefix and a first instance on it. */
async function fresh(): Promise<{ prefix: string; twain: Twain; open(): Promise<Twain> }> {
  const prefix = `sh${n++}:`
  const more = async () => {
    const t = await open(server.url, { prefix })
    opened.push(t)
    return t
  }
  return { prefix, twain: await more(), open: more }
}

async function fill(twain: Twain, topic: string, count: number, partition = 0, from = 0): Promise<void> {
  await twain
    .producer<string>(topic)
    .sendBatch(Array.from({ length: count }, (_, i) => ({ key: from + i, value: `m${from + i}`, partition })))
}

/** The next `count` messages of a consumer (each passed to `each`), or a failure after `ms`. */
async function collect<V>(
  c: SharedConsumer<V>,
  count: number,
  each?: (m: GroupMessage<V>) => void | Promise<void>,
  ms = 10_000,
): Promise<GroupMessage<V>[]> {
  const out: GroupMessage<V>[] = []
  const it = c[Symbol.asyncIterator]()
  const timer = setTimeout(() => void it.return?.(), ms)
  try {
    while (out.length < count) {
      const r = await it.next()
      if (r.done) break
      out.push(r.value)
      await each?.(r.value)
    }
  } finally {
    clearTimeout(timer)
    await it.return?.()
  }
  if (out.length < count)
    throw new Error(
      `got ${out.length} of ${count} messages within ${ms} ms: ${out.map((m) => `${m.partition}@${m.offset}`).join(' ')}`,
    )
  return out
}

const pos = (m: { topic?: string; partition: number; offset: number }) => `${m.partition}@${m.offset}`
const streamKey = (prefix: string, topic: string, partition = 0) => `${prefix}{${topic}:${partition}}`

/** Entries pending per consumer name of a partition's group. */
async function pendingBy(prefix: string, topic: string, group: string, partition = 0): Promise<Record<string, number>> {
  const rows = (await admin.xpending(streamKey(prefix, topic, partition), group, '-', '+', 10_000)) as Array<
    [string, string, number, number]
  >
  const out: Record<string, number> = {}
  for (const [, name] of rows) out[name] = (out[name] ?? 0) + 1
  return out
}

describe('competing consumers', () => {
  it('every message goes to exactly one member when all ack; describeGroup shows members, no pending, committed = end', async () => {
    const { twain, prefix } = await fresh()
    await twain.createTopic('t', { partitions: 3 })
    const members = ['a', 'b', 'c'].map((name) => twain.consumer<string>('t', { group: 'g', mode: 'shared', name }))
    const p = twain.producer<string>('t')
    const seen: Array<{ member: string; m: GroupMessage<string> }> = []
    const loops = members.map((c) =>
      (async () => {
        for await (const m of c) {
          seen.push({ member: c.name, m })
          m.ack()
          await sleep(0)
        }
      })(),
    )
    await Promise.all(members.map((c) => c.rebalance()))
    await until(
      async () => (await blockedClients(admin, 'xreadgroup')) >= 3,
      5000,
      'all three members blocked in XREADGROUP',
    )
    for (let i = 0; i < 300; i += 30)
      await p.sendBatch(Array.from({ length: 30 }, (_, k) => ({ key: i + k, value: `v${i + k}` })))
    await until(() => seen.length >= 300, 10_000, '300 messages')
    await sleep(100) // nothing is delivered twice: no 301st message arrives within 100 ms
    expect(seen).toHaveLength(300)
    expect(new Set(seen.map((s) => `${s.m.partition}@${s.m.offset}`)).size).toBe(300)
    expect(seen.every((s) => s.m.deliveryCount === 1)).toBe(true)
    expect(new Set(seen.map((s) => s.m.value)).size).toBe(300)
    expect(new Set(seen.map((s) => s.member)).size).toBeGreaterThan(1) // they did compete
    await Promise.all(members.map((c) => c.commit()))
    const d = await twain.describeGroup('g')
    expect(d.members.map((m) => m.id).sort()).toEqual(['a', 'b', 'c'])
    expect(d.members.every((m) => m.assignments.length === 3)).toBe(true)
    const ends = (await twain.describeTopic('t')).offsets.map((o) => o.end)
    expect(d.topics.map((t) => t.pending)).toEqual([0, 0, 0])
    expect(d.topics.map((t) => t.committed)).toEqual(ends)
    expect(d.topics.map((t) => t.lag)).toEqual([0, 0, 0])
    expect(members[0]?.assignments()).toEqual([0, 1, 2].map((partition) => ({ topic: 't', partition })))
    await Promise.all(members.map((c) => c.close()))
    await Promise.all(loops)
    expect((await twain.describeGroup('g')).members).toEqual([])
    // members that held nothing are deleted from the partitions' groups
    for (const part of [0, 1, 2]) expect(await admin.xinfo('CONSUMERS', streamKey(prefix, 't', part), 'g')).toEqual([])
  })

  it('one member reads several topics; the group is named after the twainmq group on every partition stream', async () => {
    const { twain, prefix } = await fresh()
    await twain.createTopic('a', { partitions: 2 })
    await twain.createTopic('b')
    await twain.producer<string>('a').sendBatch([
      { key: 1, value: 'a0', partition: 0 },
      { key: 2, value: 'a1', partition: 1 },
    ])
    await fill(twain, 'b', 2)
    const c = twain.consumer<string>(['a', 'b'], { group: 'multi', mode: 'shared' })
    const got = await collect(c, 4, (m) => m.ack())
    expect(got.map((m) => `${m.topic}:${m.value}`).sort()).toEqual(['a:a0', 'a:a1', 'b:m0', 'b:m1'])
    expect(c.assignments()).toEqual([
      { topic: 'a', partition: 0 },
      { topic: 'a', partition: 1 },
      { topic: 'b', partition: 0 },
    ])
    for (const key of [streamKey(prefix, 'a', 0), streamKey(prefix, 'a', 1), streamKey(prefix, 'b', 0)]) {
      const groups = (await admin.xinfo('GROUPS', key)) as unknown[][]
      expect(groups.map((g) => g[1])).toEqual(['multi'])
    }
    await c.close()
  })

  it("from: 'end' skips what was stored before the group existed; 'start' (default) delivers it", async () => {
    const { twain } = await fresh()
    await twain.createTopic('t')
    await fill(twain, 't', 3)
    const late = twain.consumer<string>('t', { group: 'late', mode: 'shared', from: 'end' })
    const early = twain.consumer<string>('t', { group: 'early', mode: 'shared' })
    await late.rebalance()
    await fill(twain, 't', 1, 0, 3)
    expect((await collect(late, 1, (m) => m.ack())).map((m) => m.offset)).toEqual([3])
    expect((await collect(early, 4, (m) => m.ack())).map((m) => m.offset)).toEqual([0, 1, 2, 3])
    await Promise.all([late.close(), early.close()])
    // 'end' stuck: a later member of that group does not replay history
    const again = twain.consumer<string>('t', { group: 'late', mode: 'shared', from: 'start' })
    expect(again.pollMany(10)).toEqual([]) // starts its reads (fetching is demand-driven)
    await again.rebalance()
    await sleep(200)
    expect(again.pollMany(10)).toEqual([])
    await again.close()
  })

  it('uses XAUTOCLAIM on servers before 8.4 (detected at runtime)', async () => {
    const { twain } = await fresh()
    await twain.createTopic('t')
    const c = twain.consumer('t', { group: 'g', mode: 'shared' })
    await c.rebalance()
    expect((backendOf(twain) as RedisBackend).shared.claimMode).toBe('autoclaim')
    await c.close()
  })
})

describe('claims from dead members', () => {
  it("a dead member's entries are claimed after claimAfterMs with deliveryCount 2; new entries go on meanwhile", async () => {
    const { twain, prefix } = await fresh()
    await twain.createTopic('t')
    await fill(twain, 't', 10)
    await admin.xgroup('CREATE', streamKey(prefix, 't'), 'g', '0')
    await admin.xreadgroup('GROUP', 'g', 'dead', 'COUNT', 4, 'STREAMS', streamKey(prefix, 't'), '>') // takes 0..3, never acks
    const t0 = Date.now()
    const c = twain.consumer<string>('t', { group: 'g', mode: 'shared', name: 'live', claimAfterMs: 400 })
    const at = new Map<number, number>()
    const got = await collect(c, 10, (m) => {
      at.set(m.offset, Date.now() - t0)
      m.ack()
    })
    expect(got.map((m) => m.offset).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    for (const m of got) expect(m.deliveryCount).toBe(m.offset < 4 ? 2 : 1)
    for (const o of [0, 1, 2, 3]) expect(at.get(o)).toBeGreaterThanOrEqual(350)
    // the new entries did not wait for the claim
    expect(Math.max(...[4, 5, 6, 7, 8, 9].map((o) => at.get(o) as number))).toBeLessThan(
      Math.min(...[0, 1, 2, 3].map((o) => at.get(o) as number)),
    )
    await c.commit()
    expect(await pendingBy(prefix, 't', 'g')).toEqual({})
    await c.close()
  })

  it('keeps the XAUTOCLAIM cursor: a large pending list of a dead member is claimed in full', async () => {
    const { twain, prefix } = await fresh()
    await twain.createTopic('t')
    await fill(twain, 't', 400)
    await admin.xgroup('CREATE', streamKey(prefix, 't'), 'g', '0')
    await admin.xreadgroup('GROUP', 'g', 'dead', 'COUNT', 400, 'STREAMS', streamKey(prefix, 't'), '>')
    await sleep(150)
    const c = twain.consumer<string>('t', {
      group: 'g',
      mode: 'shared',
      name: 'live',
      claimAfterMs: 100,
      maxInFlight: 7,
    })
    const got = await collect(c, 400, (m) => m.ack(), 15_000)
    expect(new Set(got.map((m) => m.offset)).size).toBe(400)
    expect(got.every((m) => m.deliveryCount === 2)).toBe(true)
    await c.commit()
    expect(await pendingBy(prefix, 't', 'g')).toEqual({})
    await c.close()
  })

  it('a member killed (SIGKILL) while holding messages: another member gets them after claimAfterMs, deliveryCount 2', async () => {
    const { twain, prefix } = await fresh()
    await twain.createTopic('t', { partitions: 2 })
    const child = spawnChild('shared-member.ts', [
      server.url,
      prefix,
      't',
      'g',
      'doomed',
      JSON.stringify({ claimAfterMs: 600 }),
    ])
    const out = lines(child)
    try {
      await until(() => out.lines.includes('# joined'), 15_000, 'the child to join')
      await twain
        .producer<string>('t')
        .sendBatch(Array.from({ length: 6 }, (_, i) => ({ key: i, value: `v${i}`, partition: i % 2 })))
      await until(() => out.lines.filter((l) => !l.startsWith('#')).length >= 6, 10_000, 'the child to hold 6 messages')
      await sleep(700) // the live child keeps them fresh: nobody may claim them yet
      const rescuer = twain.consumer<string>('t', { group: 'g', mode: 'shared', name: 'rescuer', claimAfterMs: 600 })
      expect(rescuer.pollMany(10)).toEqual([]) // starts its reads (fetching is demand-driven)
      await sleep(800)
      expect(rescuer.pollMany(10)).toEqual([]) // still held by a live member
      child.kill('SIGKILL')
      await exited(child)
      const killedAt = Date.now()
      const got = await collect(rescuer, 6, (m) => m.ack())
      expect(Date.now() - killedAt).toBeGreaterThanOrEqual(300)
      expect(got.map(pos).sort()).toEqual(['0@0', '0@1', '0@2', '1@0', '1@1', '1@2'])
      expect(got.every((m) => m.deliveryCount === 2)).toBe(true)
      await rescuer.commit()
      expect(await pendingBy(prefix, 't', 'g', 0)).toEqual({})
      expect(await pendingBy(prefix, 't', 'g', 1)).toEqual({})
      await rescuer.close()
    } finally {
      child.kill('SIGKILL')
    }
  }, 30_000)
})

describe('a restarted member (same name)', () => {
  it('first gets its own pending entries, then new ones, and does not livelock on an entry it never acks', async () => {
    const { twain, prefix } = await fresh()
    await twain.createTopic('t')
    await fill(twain, 't', 10)
    const child = spawnChild('shared-member.ts', [
      server.url,
      prefix,
      't',
      'g',
      'a',
      JSON.stringify({ claimAfterMs: 60_000 }),
    ])
    const out = lines(child)
    try {
      await until(
        () => out.lines.filter((l) => !l.startsWith('#')).length >= 10,
        15_000,
        'the child to hold 10 messages',
      )
      child.kill('SIGKILL')
      await exited(child)
    } finally {
      child.kill('SIGKILL')
    }
    await fill(twain, 't', 5, 0, 10)
    // Restarted under the same name, with a small window so recovery takes several steps.
    const a = twain.consumer<string>('t', {
      group: 'g',
      mode: 'shared',
      name: 'a',
      maxInFlight: 3,
      claimAfterMs: 60_000,
    })
    const got = await collect(a, 15, (m) => {
      if (m.offset !== 0) m.ack() // offset 0 is never acked
    })
    expect(got.map((m) => m.offset)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14])
    expect(got.map((m) => m.deliveryCount)).toEqual([2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1])
    await a.commit()
    expect(await pendingBy(prefix, 't', 'g')).toEqual({ a: 1 })
    const d = await twain.describeGroup('g')
    expect(d.topics[0]).toMatchObject({ pending: 1, committed: 0, end: 15 })
    await a.close()
    // it still holds offset 0, so it is not deleted (that would drop the entry)
    expect(await pendingBy(prefix, 't', 'g')).toEqual({ a: 1 })
  }, 30_000)

  it('a re-read of its own entries counts as a delivery (Redis delivery counter)', async () => {
    const { twain, prefix } = await fresh()
    await twain.createTopic('t')
    await fill(twain, 't', 2)
    await admin.xgroup('CREATE', streamKey(prefix, 't'), 'g', '0')
    await admin.xreadgroup('GROUP', 'g', 'w', 'COUNT', 2, 'STREAMS', streamKey(prefix, 't'), '>')
    await admin.xreadgroup('GROUP', 'g', 'w', 'STREAMS', streamKey(prefix, 't'), '0') // a recovery that died
    const w = twain.consumer<string>('t', { group: 'g', mode: 'shared', name: 'w' })
    const got = await collect(w, 2, (m) => m.ack())
    expect(got.map((m) => [m.offset, m.deliveryCount])).toEqual([
      [0, 3],
      [1, 3],
    ])
    await w.close()
  })
})

describe('slow members', () => {
  it('a member slower than claimAfterMs keeps its entries: nobody claims them, and it never gets its own entry twice', async () => {
    const { twain, prefix } = await fresh()
    await twain.createTopic('t')
    await fill(twain, 't', 4)
    const errors: Error[] = []
    const slow = twain.consumer<string>('t', {
      group: 'g',
      mode: 'shared',
      name: 'slow',
      claimAfterMs: 500,
      maxInFlight: 10,
    })
    slow.on('error', (e) => errors.push(e))
    const it = slow[Symbol.asyncIterator]()
    const first = await it.next()
    expect(first.done).toBe(false)
    const other = twain.consumer<string>('t', { group: 'g', mode: 'shared', name: 'other', claimAfterMs: 500 })
    const stolen: GroupMessage<string>[] = []
    const otherLoop = (async () => {
      for await (const m of other) {
        stolen.push(m)
        m.ack()
      }
    })()
    const got = [first.value as GroupMessage<string>]
    await sleep(1100) // handler of the first message: much longer than claimAfterMs
    got[0]?.ack()
    while (got.length < 4) {
      const r = await it.next()
      if (r.done) break
      got.push(r.value)
      await sleep(900)
      r.value.ack()
    }
    await sleep(400)
    await it.return?.()
    expect(got.map((m) => m.offset)).toEqual([0, 1, 2, 3])
    expect(got.every((m) => m.deliveryCount === 1)).toBe(true)
    expect(stolen).toEqual([])
    expect(errors).toEqual([])
    await slow.commit()
    expect(await pendingBy(prefix, 't', 'g')).toEqual({})
    await Promise.all([slow.close(), other.close()])
    await otherLoop
  }, 20_000)

  it('a member whose event loop was blocked past claimAfterMs is not handed the entries it holds again', async () => {
    const { twain } = await fresh()
    await twain.createTopic('t')
    await fill(twain, 't', 5)
    const c = twain.consumer<string>('t', { group: 'g', mode: 'shared', name: 'stuck', claimAfterMs: 100 })
    const errors: Error[] = []
    c.on('error', (e) => errors.push(e))
    let blocked = false
    const got = await collect(
      c,
      5,
      async (m) => {
        if (!blocked) {
          blocked = true
          const until = Date.now() + 500
          while (Date.now() < until) {
            /* a synchronous handler: no timers run, nothing is refreshed */
          }
          await sleep(300) // the claim scan runs and finds its own entries idle
        }
        m.ack()
      },
      5000,
    )
    expect(c.pollMany(10)).toEqual([]) // reads again (the iteration ended)
    await sleep(300)
    expect(got.map((m) => m.offset)).toEqual([0, 1, 2, 3, 4])
    expect(c.pollMany(10)).toEqual([])
    expect(errors.filter((e) => e instanceof FencedError)).toEqual([])
    await c.close()
  })
})

describe('settlement', () => {
  it('a poison message goes to the dead-letter topic after maxDeliveries, with the x- headers', async () => {
    const { twain, prefix } = await fresh()
    await twain.createTopic('t', { keyType: 'string' })
    await twain.producer<string>('t').send('k1', 'poison', { headers: { trace: 'abc' } })
    const c = twain.consumer<string>('t', { group: 'g', mode: 'shared', maxDeliveries: 3, deadLetter: 'dlq' })
    const counts: number[] = []
    const loop = (async () => {
      for await (const m of c) {
        counts.push(m.deliveryCount)
        m.nack()
      }
    })()
    await until(
      async () => (await twain.topicExists('dlq')) && (await twain.length('dlq')) === 1,
      10_000,
      'the dead letter',
    )
    expect(counts).toEqual([1, 2, 3])
    const [dead] = await (async () => {
      const out = []
      for await (const m of twain.history<string>('dlq')) out.push(m)
      return out
    })()
    expect(dead?.key).toBe('k1')
    expect(dead?.value).toBe('poison')
    expect(dead?.headers).toMatchObject({
      trace: 'abc',
      'x-original-topic': 't',
      'x-original-partition': '0',
      'x-original-offset': '0',
      'x-delivery-count': '3',
    })
    expect(dead?.headers['x-dead-letter-reason']).toMatch(/maxDeliveries 3/)
    await c.commit()
    expect(await pendingBy(prefix, 't', 'g')).toEqual({})
    await c.close()
    await loop
  })

  it('term(reason) dead-letters at once; nack({ delayMs }) re-delivers through Redis after the delay, counted', async () => {
    const { twain, prefix } = await fresh()
    await twain.createTopic('t')
    await fill(twain, 't', 2)
    const c = twain.consumer<string>('t', { group: 'g', mode: 'shared', deadLetter: 'dlq' })
    const [m0, m1] = await collect(c, 2)
    m0?.term('bad input')
    const t0 = Date.now()
    m1?.nack({ delayMs: 300 })
    const rows = (await admin.xpending(streamKey(prefix, 't'), 'g', '-', '+', 10)) as Array<
      [string, string, number, number]
    >
    expect(rows.find((r) => r[0] === '1-1')?.[3]).toBe(1)
    const [again] = await collect(c, 1)
    expect(Date.now() - t0).toBeGreaterThanOrEqual(280)
    expect(again?.offset).toBe(1)
    expect(again?.deliveryCount).toBe(2)
    const after = (await admin.xpending(streamKey(prefix, 't'), 'g', '-', '+', 10)) as Array<
      [string, string, number, number]
    >
    expect(after.find((r) => r[0] === '1-1')?.[3]).toBe(2)
    again?.ack()
    await until(
      async () => (await twain.topicExists('dlq')) && (await twain.length('dlq')) === 1,
      5000,
      'the termed message',
    )
    await c.commit()
    expect(await pendingBy(prefix, 't', 'g')).toEqual({})
    await c.close()
  })

  it('release() hands a message back uncounted: delivered again next with the same deliveryCount', async () => {
    const { twain } = await fresh()
    await twain.createTopic('t')
    await fill(twain, 't', 3)
    const c = twain.consumer<string>('t', { group: 'g', mode: 'shared' })
    await until(() => c.assignments().length === 1, 5000, 'join')
    let batch: GroupMessage<string>[] = []
    await until(() => (batch = batch.concat(c.pollMany(3 - batch.length))).length === 3, 5000, '3 polled')
    batch[1]?.release()
    batch[2]?.release()
    const again = c.pollMany(5)
    expect(again.map((m) => [m.offset, m.deliveryCount])).toEqual([
      [1, 1],
      [2, 1],
    ])
    for (const m of [batch[0], ...again]) m?.ack()
    await c.close()
  })

  it('trimmed pending entries are acknowledged and reported, never delivered as null (claim and recovery)', async () => {
    const { twain, prefix } = await fresh()
    await twain.createTopic('t')
    await fill(twain, 't', 6)
    await admin.xgroup('CREATE', streamKey(prefix, 't'), 'g', '0')
    await admin.xreadgroup('GROUP', 'g', 'dead', 'COUNT', 3, 'STREAMS', streamKey(prefix, 't'), '>') // 0..2
    await admin.xreadgroup('GROUP', 'g', 'back', 'COUNT', 3, 'STREAMS', streamKey(prefix, 't'), '>') // 3..5
    expect(await twain.trim('t', { before: { 0: 2 } })).toBe(2) // 0, 1 go
    await admin.xdel(streamKey(prefix, 't'), '4-1')
    await sleep(350)
    const errors: TwainError[] = []
    // 'back' restarts: recovery re-reads 3..5 and finds 4 trimmed; then it claims 0..2 from 'dead'
    // (idle longer than claimAfterMs) and finds 0, 1 trimmed.
    const back = twain.consumer<string>('t', { group: 'g', mode: 'shared', name: 'back', claimAfterMs: 300 })
    back.on('error', (e) => errors.push(e as TwainError))
    const got = await collect(back, 3, (m) => m.ack())
    expect(got.map((m) => [m.offset, m.value, m.deliveryCount])).toEqual([
      [3, 'm3', 2],
      [5, 'm5', 2],
      [2, 'm2', 2],
    ])
    expect(got.every((m) => m.value !== null && m.value !== undefined)).toBe(true)
    expect(back.pollMany(10)).toEqual([]) // reads again (the iteration ended)
    await sleep(400)
    expect(back.pollMany(10)).toEqual([])
    const trimmed = errors.filter((e) => e.code === 'ERR_ENTRY_TRIMMED').map((e) => e.message)
    expect(trimmed.join('\n')).toMatch(/t\/0@4/)
    expect(trimmed.join('\n')).toMatch(/t\/0@0, t\/0@1/)
    await back.commit()
    expect(await pendingBy(prefix, 't', 'g')).toEqual({})
    await back.close()
  })

  it('close() hands buffered messages back to the group at once, uncounted', async () => {
    const { twain, prefix } = await fresh()
    await twain.createTopic('t')
    await fill(twain, 't', 5)
    const a = twain.consumer<string>('t', { group: 'g', mode: 'shared', name: 'a', claimAfterMs: 20_000 })
    const [first] = await collect(a, 1)
    first?.ack()
    await a.close() // 1..4 were buffered, never handed out
    expect(await pendingBy(prefix, 't', 'g')).toEqual({ a: 4 })
    const t0 = Date.now()
    const b = twain.consumer<string>('t', { group: 'g', mode: 'shared', name: 'b', claimAfterMs: 20_000 })
    const got = await collect(b, 4, (m) => m.ack())
    expect(Date.now() - t0).toBeLessThan(10_000) // claimable at once, not after claimAfterMs (20 s) of idleness
    expect(got.map((m) => [m.offset, m.deliveryCount])).toEqual([
      [1, 1],
      [2, 1],
      [3, 1],
      [4, 1],
    ])
    await b.close()
  })
})

describe('options and admin', () => {
  it('seek() does not apply; a partitioned group refuses shared members; shared members are not partitioned ones', async () => {
    const { twain } = await fresh()
    await twain.createTopic('t', { partitions: 2 })
    const s = twain.consumer('t', { group: 'g', mode: 'shared' })
    expect(() => s.seek('t', 0, 0)).toThrow(InvalidArgumentError)
    await s.close()
    const p = twain.consumer('t', { group: 'part' })
    await until(() => p.assignments().length === 2, 5000, 'the partitioned member')
    const s2 = twain.consumer('t', { group: 'part', mode: 'shared' })
    await expect(
      (async () => {
        for await (const _ of s2) break
      })(),
    ).rejects.toBeInstanceOf(InvalidArgumentError)
    await p.close()
  })

  it('a shared group refuses partitioned members (before: both read offset 0, duplicate processing with no error)', async () => {
    const { twain } = await fresh()
    await twain.createTopic('jobs')
    await twain.producer<string>('jobs').send(1, 'job-0')
    const s = twain.consumer<string>('jobs', { group: 'g', mode: 'shared' })
    const first = await (async () => {
      for await (const m of s) return m
      return undefined
    })()
    expect(first?.offset).toBe(0)
    const p = twain.consumer<string>('jobs', { group: 'g' })
    const errors: Error[] = []
    p.on('error', (e) => errors.push(e))
    const got = await (async () => {
      for await (const m of p) return m
      return undefined
    })().catch((e: unknown) => e)
    expect(got).toBeInstanceOf(InvalidArgumentError)
    expect((got as Error).message).toMatch(
      /Group "g" is a shared group \(member \S+ is live\): use mode 'shared' or another group name/,
    )
    expect(errors).toEqual([got])
    expect((await twain.describeGroup('g')).members.map((m) => m.name)).toEqual([s.memberId]) // the refused member left
    first?.ack()
    await s.close()
  })

  it('a member name in use by a live member is refused (two readers of one name would re-read each other)', async () => {
    const { twain } = await fresh()
    await twain.createTopic('t')
    const a = twain.consumer('t', { group: 'g', mode: 'shared', name: 'same' })
    await a.rebalance()
    // Refused at once in this instance (test/integration/groups/member-names.test.ts has the other cases).
    expect(() => twain.consumer('t', { group: 'g', mode: 'shared', name: 'same' })).toThrow(/"same" is in use/)
    await a.close()
    const c = twain.consumer('t', { group: 'g', mode: 'shared', name: 'same' }) // free again once closed
    await c.rebalance()
    expect(c.assignments()).toHaveLength(1)
    await c.close()
  })

  it('a missing topic fails the consumer with TopicNotFoundError', async () => {
    const { twain } = await fresh()
    const c = twain.consumer('nope', { group: 'g', mode: 'shared' })
    await expect(
      (async () => {
        for await (const _ of c) break
      })(),
    ).rejects.toMatchObject({ code: 'ERR_TOPIC_NOT_FOUND' })
  })

  it('listGroups, resetGroup and deleteGroup work on shared groups (refused while members are live)', async () => {
    const { twain, prefix } = await fresh()
    await twain.createTopic('t')
    await fill(twain, 't', 3)
    const c = twain.consumer<string>('t', { group: 'sg', mode: 'shared' })
    await collect(c, 3, (m) => m.ack())
    expect(await twain.listGroups()).toContain('sg')
    await expect(twain.deleteGroup('sg')).rejects.toBeInstanceOf(InvalidArgumentError)
    await c.close()
    await twain.resetGroup('sg', 't', 'start')
    const again = twain.consumer<string>('t', { group: 'sg', mode: 'shared' })
    expect((await collect(again, 3, (m) => m.ack())).map((m) => m.offset)).toEqual([0, 1, 2])
    await again.close()
    await twain.deleteGroup('sg')
    expect(await twain.listGroups()).not.toContain('sg')
    expect(await admin.xinfo('GROUPS', streamKey(prefix, 't'))).toEqual([])
  })

  it('retention { consumed: true } trims what the shared group acknowledged, and never what is pending', async () => {
    const { twain } = await fresh()
    await twain.createTopic('t', { retention: { consumed: true } })
    await fill(twain, 't', 6)
    const c = twain.consumer<string>('t', { group: 'g', mode: 'shared', commitIntervalMs: 20 })
    const got = await collect(c, 6)
    for (const m of got) if (m.offset !== 3) m.ack()
    await c.commit()
    await until(
      async () => (await twain.describeTopic('t')).offsets[0]?.start === 3,
      5000,
      'retention to trim below the pending entry',
    )
    got[3]?.ack()
    await c.close()
  })
})
