// Consumer groups in one process, through the public API only (DESIGN §3.6).
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { from as rxFrom, take as rxTake, toArray as rxToArray, firstValueFrom } from 'rxjs'
import {
  AbortError,
  InvalidArgumentError,
  TopicNotFoundError,
  open,
  type Consumer,
  type ConsumerOptions,
  type GroupMessage,
  type Twain,
} from '../../src/index.js'
import { until } from '../helpers/spawn.js'
import { tempDir } from '../helpers/tmp.js'
import { sleep } from '../helpers/wait.js'
import { directoryWatches } from '../helpers/waiting-reads.js'


/** Small timings so the suite stays fast. */
const FAST = { sessionTimeoutMs: 2000, heartbeatIntervalMs: 200, commitIntervalMs: 100 } satisfies Partial<ConsumerOptions>

let tmp: ReturnType<typeof tempDir>
let twain: Twain

beforeEach(async () => {
  tmp = tempDir('twainmq-groups-')
  twain = await open(tmp.dir, { pollMs: 50 })
})
afterEach(async () => {
  try {
    await twain.close()
  } finally {
    tmp.remove()
  }
})

/** Send `n` string messages to one partition; values `${prefix}${i}`. */
async function fill(topic: string, partition: number, n: number, prefix = `p${partition}-`): Promise<void> {
  if (n === 0) return
  await twain.producer<string>(topic).sendBatch(Array.from({ length: n }, (_, i) => ({ key: i, value: `${prefix}${i}`, partition })))
}

/** Wait until `poll()` has handed out `n` messages (non-blocking polls in a loop). */
async function pollN<V>(c: Consumer<V>, n: number, ms = 5000): Promise<GroupMessage<V>[]> {
  const out: GroupMessage<V>[] = []
  await until(() => {
    out.push(...c.pollMany(n - out.length))
    return out.length >= n
  }, ms, `${n} polled messages (got ${out.length})`)
  return out
}

/** The next `n` messages of a `for await` view (the view is ended with break). */
async function iterN<V>(c: Consumer<V>, n: number, onMessage?: (m: GroupMessage<V>) => void): Promise<GroupMessage<V>[]> {
  const out: GroupMessage<V>[] = []
  if (n === 0) return out
  for await (const m of c) {
    out.push(m)
    onMessage?.(m)
    if (out.length >= n) break
  }
  return out
}

async function committed(group: string, topic: string): Promise<number[]> {
  const d = await twain.describeGroup(group)
  return d.topics.filter((t) => t.topic === topic).sort((a, b) => a.partition - b.partition).map((t) => t.committed)
}

async function waitAssigned(c: Consumer, n: number, ms = 3000): Promise<void> {
  await until(() => c.assignments().length === n, ms, `${n} assigned partitions (have ${c.assignments().length})`)
}

const sortTp = (xs: Array<{ topic: string; partition: number }>) => xs.map((x) => `${x.topic}/${x.partition}`).sort()

describe('joining and consuming', () => {
  it('a lone member owns every partition within 1 s of joining', async () => {
    await twain.createTopic('t', { partitions: 4 })
    const started = Date.now()
    const c = twain.consumer('t', { group: 'g' }) // default (long) session and heartbeat timings
    const assigned: string[] = []
    c.on('assigned', (tps) => assigned.push(...sortTp(tps)))
    await waitAssigned(c, 4, 1000)
    expect(Date.now() - started).toBeLessThan(1000)
    expect(sortTp(c.assignments())).toEqual(['t/0', 't/1', 't/2', 't/3'])
    await until(() => assigned.length === 4, 1000, 'assigned events')
    expect(assigned.sort()).toEqual(['t/0', 't/1', 't/2', 't/3'])
    await c.close()
  })

  it('for await + ack delivers every message once in per-partition order and commits all of them', async () => {
    await twain.createTopic('t', { partitions: 3 })
    await fill('t', 0, 7)
    await fill('t', 1, 5)
    await fill('t', 2, 3)
    const c = twain.consumer<string>('t', { group: 'g', ...FAST })
    const got = await iterN(c, 15, (m) => m.ack())
    for (let p = 0; p < 3; p++) {
      const offs = got.filter((m) => m.partition === p).map((m) => m.offset)
      expect(offs).toEqual(offs.map((_, i) => i))
    }
    expect(got.map((m) => m.value).sort()).toEqual(
      [...Array.from({ length: 7 }, (_, i) => `p0-${i}`), ...Array.from({ length: 5 }, (_, i) => `p1-${i}`), ...Array.from({ length: 3 }, (_, i) => `p2-${i}`)].sort(),
    )
    expect(got.every((m) => m.deliveryCount === 1)).toBe(true)
    await c.commit()
    expect(await committed('g', 't')).toEqual([7, 5, 3])
    const d = await twain.describeGroup('g')
    expect(d.topics.map((t) => t.lag)).toEqual([0, 0, 0])
    // nothing more arrives (the first poll starts reads again: the iteration ended)
    expect(c.pollMany(10)).toEqual([])
    await sleep(200) // nothing arrives within 200 ms
    expect(c.pollMany(10)).toEqual([])
    await c.close()
  })

  it('messages sent after the member joined (a consumer made before any producer) are delivered', async () => {
    await twain.createTopic('t', { partitions: 2 })
    const c = twain.consumer<string>('t', { group: 'g', ...FAST })
    await waitAssigned(c, 2)
    const before = directoryWatches()
    const reading = iterN(c, 4, (m) => m.ack())
    await until(() => directoryWatches() > before, 5000, 'the view to wait on a watch')
    await fill('t', 0, 2, 'a')
    await fill('t', 1, 2, 'b')
    expect((await reading).map((m) => m.value).sort()).toEqual(['a0', 'a1', 'b0', 'b1'])
    await c.close()
  })

  it("from: 'start' (the default) reads the history", async () => {
    await twain.createTopic('t')
    await fill('t', 0, 5)
    const c = twain.consumer<string>('t', { group: 'g', ...FAST })
    const ms = await pollN(c, 5)
    expect(ms.map((m) => m.offset)).toEqual([0, 1, 2, 3, 4])
    ms.forEach((m) => m.ack())
    await c.close()
  })

  it("from: 'end' on an idle topic with history delivers nothing old, only what comes later", async () => {
    await twain.createTopic('t', { partitions: 2 })
    await fill('t', 0, 5)
    await fill('t', 1, 3)
    const c = twain.consumer<string>('t', { group: 'g', from: 'end', ...FAST })
    expect(c.pollMany(100)).toEqual([]) // starts its reads (fetching is demand-driven)
    await waitAssigned(c, 2)
    await sleep(300) // nothing old arrives within 300 ms
    expect(c.pollMany(100)).toEqual([])
    await fill('t', 1, 1, 'new')
    const got = await pollN(c, 1)
    expect(got.map((m) => [m.partition, m.offset, m.value])).toEqual([[1, 3, 'new0']])
    got.forEach((m) => m.ack())
    await c.close()
  })

  it("from: 'end' is committed at once, so a later member resumes there and not at the start", async () => {
    await twain.createTopic('t', { partitions: 2 })
    await fill('t', 0, 5)
    await fill('t', 1, 3)
    // a long commit interval: only the immediate 'end' commit can explain what describeGroup shows
    const a = twain.consumer<string>('t', { group: 'g', from: 'end', sessionTimeoutMs: 2000, heartbeatIntervalMs: 200, commitIntervalMs: 60_000 })
    await waitAssigned(a, 2)
    await until(async () => (await committed('g', 't')).join() === '5,3', 1000, "the 'end' position to be committed")
    await a.close()
    await fill('t', 0, 2, 'later')
    const b = twain.consumer<string>('t', { group: 'g', from: 'start', ...FAST })
    const got = await pollN(b, 2)
    expect(got.map((m) => [m.partition, m.offset, m.value])).toEqual([
      [0, 5, 'later0'],
      [0, 6, 'later1'],
    ])
    await sleep(200) // nothing before the commit arrives within 200 ms
    expect(b.pollMany(100)).toEqual([])
    got.forEach((m) => m.ack())
    await b.close()
  })

  it("from: 'end' does not override an existing commit of the group", async () => {
    await twain.createTopic('t')
    await fill('t', 0, 6)
    await twain.resetGroup('g', 't', { 0: 2 })
    const c = twain.consumer<string>('t', { group: 'g', from: 'end', ...FAST })
    const ms = await pollN(c, 4)
    expect(ms.map((m) => m.offset)).toEqual([2, 3, 4, 5])
    ms.forEach((m) => m.ack())
    await c.close()
  })

  it('a consumer of a topic that does not exist fails its iteration with TopicNotFoundError', async () => {
    const c = twain.consumer('missing', { group: 'g', ...FAST })
    await expect(iterN(c, 1)).rejects.toBeInstanceOf(TopicNotFoundError)
    await c.close()
  })
})

describe('commits', () => {
  it('commits only the contiguous acked prefix (acks out of order)', async () => {
    await twain.createTopic('t')
    await fill('t', 0, 6)
    const c = twain.consumer<string>('t', { group: 'g', ...FAST, commitIntervalMs: 60_000 })
    const ms = await pollN(c, 6)
    for (const i of [1, 0, 3, 5]) ms[i]!.ack()
    await c.commit()
    expect(await committed('g', 't')).toEqual([2])
    ms[4]!.ack()
    await c.commit()
    expect(await committed('g', 't')).toEqual([2])
    ms[2]!.ack()
    await c.commit()
    expect(await committed('g', 't')).toEqual([6])
    const d = await twain.describeGroup('g')
    expect(d.topics).toEqual([{ topic: 't', partition: 0, committed: 6, end: 6, lag: 0 }])
    await c.close()
  })

  it('commits nothing that was not acked (also not by the periodic commit or close)', async () => {
    await twain.createTopic('t', { partitions: 2 })
    await fill('t', 0, 4)
    await fill('t', 1, 4)
    const c = twain.consumer<string>('t', { group: 'g', ...FAST, drainTimeoutMs: 300 })
    const ms = await pollN(c, 8)
    await c.commit()
    await sleep(300) // several commit intervals: none of them commits anything
    expect(await committed('g', 't')).toEqual([0, 0])
    const d = await twain.describeGroup('g')
    expect(d.topics.map((t) => [t.committed, t.end, t.lag])).toEqual([
      [0, 4, 4],
      [0, 4, 4],
    ])
    ms.filter((m) => m.partition === 1 && m.offset < 2).forEach((m) => m.ack())
    const t0 = Date.now()
    await c.close() // waits up to the drain timeout for the rest
    expect(Date.now() - t0).toBeLessThan(1500)
    expect(await committed('g', 't')).toEqual([0, 2])
  })

  it("the periodic commit writes acked offsets by itself and emits 'commit'", async () => {
    await twain.createTopic('t')
    await fill('t', 0, 3)
    const c = twain.consumer<string>('t', { group: 'g', ...FAST })
    const events: Array<{ topic: string; partition: number; offset: number }> = []
    const off = c.on('commit', (cs) => events.push(...cs))
    const ms = await pollN(c, 3)
    ms.forEach((m) => m.ack())
    await until(async () => (await committed('g', 't'))[0] === 3, 2000, 'periodic commit')
    await until(() => events.some((e) => e.offset === 3), 1000, 'commit event')
    expect(events.at(-1)).toEqual({ topic: 't', partition: 0, offset: 3 })
    off()
    const count = events.length
    await fill('t', 0, 1)
    ;(await pollN(c, 1))[0]!.ack()
    await c.commit()
    expect(await committed('g', 't')).toEqual([4])
    expect(events.length).toBe(count) // unsubscribed
    await c.close()
  })

  it('a nacked message holds the commit point until it is acked', async () => {
    await twain.createTopic('t')
    await fill('t', 0, 3)
    const c = twain.consumer<string>('t', { group: 'g', ...FAST })
    const ms = await pollN(c, 3)
    ms[0]!.nack()
    ms[1]!.ack()
    ms[2]!.ack()
    await c.commit()
    expect(await committed('g', 't')).toEqual([0])
    const again = await pollN(c, 1)
    expect(again[0]!.offset).toBe(0)
    expect(again[0]!.deliveryCount).toBe(2)
    again[0]!.ack()
    await c.commit()
    expect(await committed('g', 't')).toEqual([3])
    await c.close()
  })

  it('close() never commits past a nacked message that was waiting for redelivery', async () => {
    await twain.createTopic('t')
    await fill('t', 0, 10)
    const c = twain.consumer<string>('t', { group: 'g', ...FAST, commitIntervalMs: 60_000 })
    const ms = await pollN(c, 5) // 0..4 delivered, 5..9 buffered
    ms[0]!.ack()
    ms[1]!.ack()
    ms[3]!.ack()
    ms[4]!.ack()
    ms[2]!.nack() // redelivered after the buffered ones
    await c.close()
    // offset 2 was never acked: the group must not have moved past it
    expect(await committed('g', 't')).toEqual([2])
  })

  it('close() does not commit past a nacked message (two messages: nack the first, ack the second)', async () => {
    await twain.createTopic('t')
    await fill('t', 0, 2)
    const c = twain.consumer<string>('t', { group: 'g', ...FAST, commitIntervalMs: 60_000 })
    const [m0, m1] = await pollN(c, 2)
    m0!.nack()
    m1!.ack()
    await c.close()
    expect(await committed('g', 't')).toEqual([0])
  })

  it('a nacked message on a partition that moves to another member is delivered to the new owner', async () => {
    await twain.createTopic('t', { partitions: 2 })
    await fill('t', 1, 10)
    const a = twain.consumer<string>('t', { group: 'g', ...FAST, commitIntervalMs: 60_000 })
    await waitAssigned(a, 2)
    const ms = await pollN(a, 5) // partition 1: 0..4 delivered, 5..9 buffered
    for (const i of [0, 1, 3, 4]) ms[i]!.ack()
    ms[2]!.nack() // back in the buffer, behind 5..9
    const b = twain.consumer<string>('t', { group: 'g', ...FAST })
    await until(() => a.assignments().length === 1 && b.assignments().length === 1, 3000, 'a 1/1 split')
    const got: number[] = []
    await until(() => {
      for (const m of [...a.pollMany(100), ...b.pollMany(100)]) {
        if (m.partition === 1) got.push(m.offset)
        m.ack()
      }
      return got.includes(9)
    }, 3000, 'the rest of partition 1')
    expect(got).toContain(2)
    await a.close()
    await b.close()
  })
})

describe('flow control and settlement', () => {
  it('maxInFlight bounds the delivered-but-unacked messages', async () => {
    await twain.createTopic('t', { partitions: 3 })
    for (let p = 0; p < 3; p++) await fill('t', p, 30)
    const c = twain.consumer<string>('t', { group: 'g', ...FAST, maxInFlight: 5 })
    await waitAssigned(c, 3)
    const first = await pollN(c, 5)
    await sleep(300) // no sixth message within 300 ms
    expect(c.pollMany(100)).toEqual([])
    first[0]!.ack()
    first[1]!.ack()
    const next = await pollN(c, 2)
    await sleep(200) // no more than the two freed slots within 200 ms
    expect(c.pollMany(100)).toEqual([])
    // drain everything 5 at a time: never more than 5 un-acked
    const seen = new Set([...first, ...next].map((m) => `${m.partition}@${m.offset}`))
    let open = [...first.slice(2), ...next]
    while (seen.size < 90) {
      expect(open.length).toBeLessThanOrEqual(5)
      open.forEach((m) => m.ack())
      open = []
      await until(() => {
        open.push(...c.pollMany(100))
        return open.length > 0 || seen.size >= 90
      }, 3000, 'more messages')
      expect(open.length).toBeLessThanOrEqual(5)
      for (const m of open) seen.add(`${m.partition}@${m.offset}`)
    }
    expect(seen.size).toBe(90)
    open.forEach((m) => m.ack())
    await c.close()
  })

  for (const busy of [0, 1]) {
    it(`a small maxInFlight does not starve a partition behind a busy one (busy partition ${busy})`, async () => {
      const quiet = 1 - busy
      await twain.createTopic('t', { partitions: 2 })
      await twain.producer<string>('t').sendBatch(Array.from({ length: 2000 }, (_, i) => ({ key: i, value: `busy${i}`, partition: busy })))
      await fill('t', quiet, 5)
      const c = twain.consumer<string>('t', { group: 'g', ...FAST, maxInFlight: 10 })
      const order: number[] = []
      for await (const m of c) {
        order.push(m.partition)
        m.ack()
        if (order.filter((p) => p === quiet).length === 5 || order.length === 2005) break
      }
      // every partition gets a turn: the quiet one's 5 messages come early, not after the 2000 others
      expect(order.lastIndexOf(quiet)).toBeLessThan(200)
      c.pollMany(3000).forEach((m) => m.ack())
      await c.close()
    })
  }

  it('poll() and pollMany() never wait', async () => {
    await twain.createTopic('t')
    const c = twain.consumer<string>('t', { group: 'g', ...FAST })
    const r = c.poll()
    expect(r).toBeUndefined()
    expect(c.pollMany(10)).toEqual([])
    await waitAssigned(c, 1)
    expect(c.poll()).toBeUndefined()
    await fill('t', 0, 3)
    const got = await pollN(c, 3)
    expect(got.map((m) => m.value)).toEqual(['p0-0', 'p0-1', 'p0-2'])
    got.forEach((m) => m.ack())
    await c.close()
  })

  it('nack({ delayMs }) redelivers after the delay with deliveryCount + 1', async () => {
    await twain.createTopic('t')
    await fill('t', 0, 1)
    const c = twain.consumer<string>('t', { group: 'g', ...FAST })
    const [m] = await pollN(c, 1)
    expect(m!.deliveryCount).toBe(1)
    const t0 = Date.now()
    m!.nack({ delayMs: 400 })
    await sleep(250) // time is the subject: not redelivered before the delay
    expect(c.poll()).toBeUndefined()
    const [again] = await pollN(c, 1, 2000)
    expect(Date.now() - t0).toBeGreaterThanOrEqual(390)
    expect(again!.offset).toBe(0)
    expect(again!.value).toBe('p0-0')
    expect(again!.deliveryCount).toBe(2)
    again!.nack()
    const [third] = await pollN(c, 1, 1000)
    expect(third!.deliveryCount).toBe(3)
    third!.ack()
    await c.commit()
    expect(await committed('g', 't')).toEqual([1])
    await c.close()
  })

  it('nack redelivers in a for await view too', async () => {
    await twain.createTopic('t')
    await fill('t', 0, 2)
    const c = twain.consumer<string>('t', { group: 'g', ...FAST })
    const seen: Array<[number, number]> = []
    for await (const m of c) {
      seen.push([m.offset, m.deliveryCount])
      if (m.offset === 0 && m.deliveryCount === 1) m.nack({ delayMs: 50 })
      else m.ack()
      if (seen.length === 3) break
    }
    expect(seen).toEqual([
      [0, 1],
      [1, 1],
      [0, 2],
    ])
    await c.close()
  })

  it('term(reason) writes a dead letter with the x- headers, the original key/value/type/headers, then acks it', async () => {
    await twain.createTopic('orders', { partitions: 3, keyType: 'string' })
    twain.registerType('Order')
    const p = twain.producer<{ id: number }>('orders')
    const sent = await p.send('order-7', { id: 7 }, { type: 'Order', headers: { trace: 'abc', 'x-custom': '1' }, partition: 2 })
    await p.send('order-8', { id: 8 }, { partition: 2 })
    const c = twain.consumer<{ id: number }>('orders', { group: 'g', deadLetter: 'orders-dlq', ...FAST })
    const [m, next] = await pollN(c, 2)
    expect(m!.type).toBe('Order')
    m!.term('bad order')
    next!.ack()
    await until(async () => (await twain.topicExists('orders-dlq')) && (await twain.length('orders-dlq')) === 1, 3000, 'the dead letter')
    const info = await twain.describeTopic('orders-dlq')
    expect(info.partitions).toBe(1)
    expect(info.keyType).toBe('string')
    const dead = []
    for await (const d of twain.history<{ id: number }>('orders-dlq')) dead.push(d)
    expect(dead).toHaveLength(1)
    const d = dead[0]!
    expect(d.key).toBe('order-7')
    expect(d.value).toEqual({ id: 7 })
    expect(d.type).toBe('Order')
    expect(d.headers).toEqual({
      trace: 'abc',
      'x-custom': '1',
      'x-dead-letter-reason': 'bad order',
      'x-original-topic': 'orders',
      'x-original-partition': '2',
      'x-original-offset': String(sent.offset),
      'x-delivery-count': '1',
    })
    // termed = acked: the commit passes it
    await c.commit()
    expect((await committed('g', 'orders'))[2]).toBe(2)
    await c.close()
  })

  it('a dead letter of a u64-keyed topic keeps the bigint key and the bytes value', async () => {
    await twain.createTopic('big', { keyType: 'u64' })
    await twain.producer('big').send(2n ** 63n + 5n, new Uint8Array([1, 2, 3]))
    const c = twain.consumer('big', { group: 'g', deadLetter: 'big-dlq', ...FAST })
    const [m] = await pollN(c, 1)
    m!.term()
    await until(async () => (await twain.topicExists('big-dlq')) && (await twain.length('big-dlq')) === 1, 3000, 'the dead letter')
    expect((await twain.describeTopic('big-dlq')).keyType).toBe('u64')
    const [d] = await (async () => {
      const out = []
      for await (const x of twain.history('big-dlq')) out.push(x)
      return out
    })()
    expect(d!.key).toBe(2n ** 63n + 5n)
    expect(d!.value).toBeInstanceOf(Uint8Array)
    expect([...(d!.value as Uint8Array)]).toEqual([1, 2, 3])
    await c.close()
  })

  it('term() without a dead-letter topic just acks the message', async () => {
    await twain.createTopic('t')
    await fill('t', 0, 2)
    const c = twain.consumer<string>('t', { group: 'g', ...FAST })
    const ms = await pollN(c, 2)
    ms[0]!.term('nope')
    ms[1]!.ack()
    await c.commit()
    expect(await committed('g', 't')).toEqual([2])
    expect(await twain.listTopics()).toEqual(['t'])
    await c.close()
  })

  it('maxDeliveries terms a message that was delivered that many times (to the dead-letter topic)', async () => {
    await twain.createTopic('t')
    await fill('t', 0, 2)
    const c = twain.consumer<string>('t', { group: 'g', deadLetter: 'dlq', maxDeliveries: 2, ...FAST })
    const counts: number[] = []
    const first = await pollN(c, 2)
    first[1]!.ack()
    counts.push(first[0]!.deliveryCount)
    first[0]!.nack()
    const second = await pollN(c, 1)
    counts.push(second[0]!.deliveryCount)
    second[0]!.nack()
    await sleep(300) // not delivered a third time within 300 ms
    expect(c.pollMany(10)).toEqual([]) // not delivered a third time
    expect(counts).toEqual([1, 2])
    await until(async () => (await twain.topicExists('dlq')) && (await twain.length('dlq')) === 1, 3000, 'the dead letter')
    const dead = []
    for await (const d of twain.history<string>('dlq')) dead.push(d)
    expect(dead[0]!.value).toBe('p0-0')
    expect(dead[0]!.headers['x-original-offset']).toBe('0')
    expect(dead[0]!.headers['x-dead-letter-reason']).toBeTruthy()
    // it was delivered twice
    expect(dead[0]!.headers['x-delivery-count']).toBe('2')
    await c.commit()
    expect(await committed('g', 't')).toEqual([2])
    await c.close()
  })

  it("a failing dead-letter write is reported on 'error' and the message is not lost", async () => {
    await twain.createTopic('t', { keyType: 'u16' })
    await twain.createTopic('dlq', { keyType: 'u8' }) // cannot hold key 1000
    await twain.producer<string>('t').send(1000, 'x')
    const c = twain.consumer<string>('t', { group: 'g', deadLetter: 'dlq', ...FAST })
    const errors: Error[] = []
    c.on('error', (e) => errors.push(e))
    const [m] = await pollN(c, 1)
    m!.term('bad')
    await until(() => errors.length > 0, 3000, "an 'error' event")
    await c.commit()
    expect(await committed('g', 't')).toEqual([0])
    // it comes back
    const [again] = await pollN(c, 1, 3000)
    expect(again!.offset).toBe(0)
    again!.ack()
    await c.close()
  })
})

describe('seek and assignments', () => {
  it('seek() continues a partition from the given offset', async () => {
    await twain.createTopic('t', { partitions: 2 })
    await fill('t', 0, 10)
    const c = twain.consumer<string>('t', { group: 'g', ...FAST, commitIntervalMs: 60_000 })
    const ms = await pollN(c, 10)
    ms.forEach((m) => m.ack())
    await c.commit()
    expect(await committed('g', 't')).toEqual([10, 0])
    c.seek('t', 0, 3)
    const again = await pollN(c, 7)
    expect(again.map((m) => m.offset)).toEqual([3, 4, 5, 6, 7, 8, 9])
    again.slice(0, 2).forEach((m) => m.ack())
    await c.commit()
    expect(await committed('g', 't')).toEqual([5, 0])
    again.forEach((m) => m.ack())
    await c.close()
  })

  it('seek() forward skips messages, and acks of messages from before the seek are ignored', async () => {
    await twain.createTopic('t')
    await fill('t', 0, 10)
    const c = twain.consumer<string>('t', { group: 'g', ...FAST, commitIntervalMs: 60_000 })
    const ms = await pollN(c, 2)
    c.seek('t', 0, 8)
    ms.forEach((m) => m.ack())
    const after = await pollN(c, 2)
    expect(after.map((m) => m.offset)).toEqual([8, 9])
    await c.commit()
    expect(await committed('g', 't')).toEqual([8])
    after.forEach((m) => m.ack())
    await c.close()
    expect(await committed('g', 't')).toEqual([10])
  })

  it("seek() while a fetch is under way raises no 'error'", async () => {
    await twain.createTopic('t')
    await twain.producer<string>('t').sendBatch(Array.from({ length: 2000 }, (_, i) => ({ key: 1, value: `v${i}` })))
    const c = twain.consumer<string>('t', { group: 'g', ...FAST, drainTimeoutMs: 200 })
    const errors: Error[] = []
    c.on('error', (e) => errors.push(e))
    await waitAssigned(c, 1)
    for (let i = 0; i < 300; i++) {
      c.seek('t', 0, (i * 37) % 2000)
      await new Promise((r) => setImmediate(r))
      for (const m of c.pollMany(50)) m.ack()
    }
    expect(errors.map((e) => e.message)).toEqual([])
    await c.close()
  })

  it('a seek() while the fetch of an earlier seek is under way is not skipped past (nothing is lost)', async () => {
    await twain.createTopic('t')
    await twain.producer<string>('t').sendBatch(Array.from({ length: 2000 }, (_, i) => ({ key: 1, value: `v${i}` })))
    const c = twain.consumer<string>('t', { group: 'g', ...FAST, maxInFlight: 5, commitIntervalMs: 60_000 })
    await waitAssigned(c, 1)
    ;(await pollN(c, 5)).forEach((m) => m.ack())
    c.seek('t', 0, 0) // the fetch loop starts re-opening the partition at 0…
    await Promise.resolve()
    c.seek('t', 0, 1990) // …and the application changes its mind
    const got: number[] = []
    await until(() => {
      for (const m of c.pollMany(100)) {
        got.push(m.offset)
        m.ack()
      }
      return got.includes(1999)
    }, 3000, 'offset 1999')
    expect(got).toEqual(Array.from({ length: 10 }, (_, i) => 1990 + i))
    await c.commit()
    expect(await committed('g', 't')).toEqual([2000])
    await c.close()
  })

  it('seek() rejects a topic the consumer does not read and a negative offset', async () => {
    await twain.createTopic('t')
    const c = twain.consumer('t', { group: 'g', ...FAST })
    expect(() => c.seek('other', 0, 1)).toThrow(InvalidArgumentError)
    expect(() => c.seek('t', 0, -1)).toThrow(InvalidArgumentError)
    await c.close()
  })

  it('assignments() matches what describeGroup reports for the member', async () => {
    await twain.createTopic('a', { partitions: 2 })
    await twain.createTopic('b', { partitions: 3 })
    const c = twain.consumer(['a', 'b'], { group: 'g', ...FAST })
    await waitAssigned(c, 5)
    const d = await twain.describeGroup('g')
    expect(d.members).toHaveLength(1)
    expect(sortTp(d.members[0]!.assignments)).toEqual(sortTp(c.assignments()))
    expect(sortTp(c.assignments())).toEqual(['a/0', 'a/1', 'b/0', 'b/1', 'b/2'])
    expect(d.topics.map((t) => `${t.topic}/${t.partition}`)).toEqual(['a/0', 'a/1', 'b/0', 'b/1', 'b/2'])
    await c.close()
  })
})

describe('events', () => {
  it("on() returns an unsubscribe; 'assigned' and 'revoked' report partitions", async () => {
    await twain.createTopic('t', { partitions: 2 })
    const c = twain.consumer('t', { group: 'g', ...FAST })
    const assigned: string[] = []
    const revoked: string[] = []
    const revoked2: string[] = []
    const offA = c.on('assigned', (tps) => assigned.push(...sortTp(tps)))
    c.on('revoked', (tps) => revoked.push(...sortTp(tps)))
    const offR2 = c.on('revoked', (tps) => revoked2.push(...sortTp(tps)))
    expect(typeof offA).toBe('function')
    await waitAssigned(c, 2)
    await until(() => assigned.length === 2, 1000, 'assigned')
    expect(assigned.sort()).toEqual(['t/0', 't/1'])
    offR2()
    await c.close()
    expect(revoked.sort()).toEqual(['t/0', 't/1'])
    expect(revoked2).toEqual([])
  })

  it("a second member makes the first emit 'revoked' for what moved, and the second 'assigned'", async () => {
    await twain.createTopic('t', { partitions: 4 })
    const a = twain.consumer('t', { group: 'g', ...FAST })
    await waitAssigned(a, 4)
    const revoked: string[] = []
    a.on('revoked', (tps) => revoked.push(...sortTp(tps)))
    const b = twain.consumer('t', { group: 'g', ...FAST })
    const assignedB: string[] = []
    b.on('assigned', (tps) => assignedB.push(...sortTp(tps)))
    await until(() => a.assignments().length === 2 && b.assignments().length === 2, 2000, 'a 2/2 split')
    await until(() => revoked.length === 2 && assignedB.length === 2, 1000, 'events')
    expect(revoked.sort()).toEqual(assignedB.sort())
    expect([...sortTp(a.assignments()), ...sortTp(b.assignments())].sort()).toEqual(['t/0', 't/1', 't/2', 't/3'])
    await b.close()
    await a.close()
  })
})

describe('rebalancing in one process', () => {
  it('splits partitions among members as they join and leave (counts differ ≤ 1, each partition owned once)', async () => {
    await twain.createTopic('t', { partitions: 7 })
    const errors: Error[] = []
    const members: Consumer[] = []
    const check = async (n: number) => {
      await until(() => {
        const counts = members.map((m) => m.assignments().length)
        const all = members.flatMap((m) => sortTp(m.assignments()))
        return all.length === 7 && new Set(all).size === 7 && Math.max(...counts) - Math.min(...counts) <= 1
      }, 3000, `a balanced split over ${n} members (${members.map((m) => m.assignments().length).join(',')})`)
      const d = await twain.describeGroup('g')
      expect(d.members).toHaveLength(n)
      const owned = d.members.flatMap((m) => sortTp(m.assignments))
      expect(owned.sort()).toEqual(['t/0', 't/1', 't/2', 't/3', 't/4', 't/5', 't/6'])
    }
    const owners = () => new Map(members.flatMap((m) => m.assignments().map((a) => [`${a.topic}/${a.partition}`, m] as const)))
    for (let i = 0; i < 4; i++) {
      const before = owners()
      const c = twain.consumer('t', { group: 'g', ...FAST })
      c.on('error', (e) => errors.push(e))
      members.push(c)
      await check(members.length)
      // sticky: a partition either stays with its owner or goes to the newcomer
      for (const [k, owner] of owners()) if (before.has(k)) expect([before.get(k), c]).toContain(owner)
    }
    while (members.length > 1) {
      await members.shift()!.close()
      await check(members.length)
    }
    await members[0]!.close()
    expect(errors).toEqual([])
  })

  it('a member joining an idle group gets its partitions in < 1 s (default session/heartbeat timings)', async () => {
    await twain.createTopic('t', { partitions: 4 })
    const a = twain.consumer('t', { group: 'g' })
    await waitAssigned(a, 4)
    const t0 = Date.now()
    const b = twain.consumer('t', { group: 'g' })
    await until(() => b.assignments().length === 2 && a.assignments().length === 2, 1000, 'the newcomer to get 2 partitions')
    expect(Date.now() - t0).toBeLessThan(1000)
    await b.close()
    // and when it leaves, the other takes everything back quickly
    const t1 = Date.now()
    await until(() => a.assignments().length === 4, 1000, 'the remaining member to get everything')
    expect(Date.now() - t1).toBeLessThan(1000)
    await a.close()
  })

  it('rebalance() runs a coordination step now and resolves after it', async () => {
    await twain.createTopic('t', { partitions: 2 })
    // heartbeats far apart: only rebalance() (and the group watch) drive the steps
    const opts = { group: 'g', sessionTimeoutMs: 30_000, heartbeatIntervalMs: 10_000, commitIntervalMs: 100 }
    const a = twain.consumer('t', opts)
    await a.rebalance()
    expect(a.assignments()).toHaveLength(2)
    const b = twain.consumer('t', opts)
    await b.rebalance()
    await a.rebalance()
    await a.rebalance()
    await b.rebalance()
    await until(() => a.assignments().length === 1 && b.assignments().length === 1, 2000, 'a 1/1 split')
    await a.close()
    await b.close()
  })

  it('six members created at once share 12 partitions two each, without errors', async () => {
    await twain.createTopic('t', { partitions: 12 })
    const errors: Error[] = []
    const cs = Array.from({ length: 6 }, () => {
      const c = twain.consumer('t', { group: 'g', ...FAST })
      c.on('error', (e) => errors.push(e))
      return c
    })
    await until(() => cs.every((c) => c.assignments().length === 2), 5000, 'two partitions each')
    expect(new Set(cs.flatMap((c) => sortTp(c.assignments()))).size).toBe(12)
    await Promise.all(cs.map((c) => c.close()))
    expect(errors).toEqual([])
  })

  it('a partition moves only after its in-flight messages are acked (or the drain times out)', async () => {
    await twain.createTopic('t', { partitions: 2 })
    await fill('t', 0, 3)
    await fill('t', 1, 3)
    const a = twain.consumer<string>('t', { group: 'g', ...FAST, commitIntervalMs: 60_000 })
    const held = await pollN(a, 6)
    const b = twain.consumer<string>('t', { group: 'g', ...FAST })
    await sleep(800) // well past several heartbeats, within the drain timeout (the session timeout, 2 s)
    expect(b.assignments()).toEqual([])
    expect(a.assignments()).toHaveLength(2)
    held.forEach((m) => m.ack())
    await until(() => b.assignments().length === 1 && a.assignments().length === 1, 1000, 'the move after the acks')
    await sleep(200) // nothing arrives within 200 ms
    expect(b.pollMany(10)).toEqual([]) // acked before the move: nothing is delivered again
    await a.close()
    await b.close()
    expect(await committed('g', 't')).toEqual([3, 3])
  })

  it('an un-acked in-flight message is given up after the drain timeout and redelivered by the new owner', async () => {
    await twain.createTopic('t', { partitions: 2 })
    await fill('t', 0, 1)
    await fill('t', 1, 1)
    const opts = { group: 'g', sessionTimeoutMs: 2000, heartbeatIntervalMs: 100, commitIntervalMs: 100, drainTimeoutMs: 500 }
    const a = twain.consumer<string>('t', opts)
    await pollN(a, 2) // never acked
    const b = twain.consumer<string>('t', opts)
    const t0 = Date.now()
    await until(() => b.assignments().length === 1, 3000, 'the move after the drain timeout')
    expect(Date.now() - t0).toBeGreaterThanOrEqual(400)
    const [again] = await pollN(b, 1)
    expect(again!.deliveryCount).toBe(1)
    again!.ack()
    await b.close()
    await a.close()
  })

  it('messages in flight on a moving partition are delivered exactly once when acked before the move', async () => {
    await twain.createTopic('t', { partitions: 4 })
    for (let p = 0; p < 4; p++) await fill('t', p, 50)
    const seen: string[] = []
    const a = twain.consumer<string>('t', { group: 'g', ...FAST, maxInFlight: 10 })
    const readA = (async () => {
      for await (const m of a) {
        seen.push(`${m.partition}@${m.offset}`)
        m.ack()
        await sleep(2) // a slow handler, so messages are in flight when b joins
      }
    })()
    await until(() => seen.length >= 30, 5000, 'a to read some')
    const b = twain.consumer<string>('t', { group: 'g', ...FAST, maxInFlight: 10 })
    const readB = (async () => {
      for await (const m of b) {
        seen.push(`${m.partition}@${m.offset}`)
        m.ack()
      }
    })()
    await until(() => new Set(seen).size === 200, 10_000, 'all 200 messages')
    expect(seen.length).toBe(200) // acked before moving: nothing is read twice
    await a.close()
    await b.close()
    await Promise.all([readA, readB])
  })
})

describe('close and the membership', () => {
  it('close() drains: a message acked after close() began is committed, and the member leaves', async () => {
    await twain.createTopic('t')
    await fill('t', 0, 3)
    const c = twain.consumer<string>('t', { group: 'g', ...FAST, commitIntervalMs: 60_000 })
    const ms = await pollN(c, 3)
    ms[0]!.ack()
    const closing = c.close()
    await sleep(150) // close() is under way: it waits for the acks instead of finishing
    ms[1]!.ack()
    ms[2]!.ack()
    await closing
    expect(await committed('g', 't')).toEqual([3])
    expect((await twain.describeGroup('g')).members).toEqual([])
  })

  it('close() keeps the membership alive while it drains (an ack later than the session timeout, within the drain timeout, is committed)', async () => {
    await twain.createTopic('t')
    await fill('t', 0, 2)
    const opts = { group: 'g', sessionTimeoutMs: 1000, heartbeatIntervalMs: 100, commitIntervalMs: 60_000, drainTimeoutMs: 4000 }
    const a = twain.consumer<string>('t', opts)
    const ms = await pollN(a, 2)
    const b = twain.consumer<string>('t', { ...opts, commitIntervalMs: 100 }) // another live member
    const closing = a.close()
    await sleep(1500) // time is the subject: longer than the session timeout (1 s)
    ms.forEach((m) => m.ack())
    await closing
    expect(await committed('g', 't')).toEqual([2])
    await sleep(300) // nothing arrives within 300 ms
    expect(b.pollMany(10)).toEqual([]) // b does not get them again
    await b.close()
  })

  it('close() gives up on un-acked messages after the drain timeout and commits only what was acked', async () => {
    await twain.createTopic('t')
    await fill('t', 0, 3)
    const c = twain.consumer<string>('t', { group: 'g', ...FAST, drainTimeoutMs: 300 })
    const ms = await pollN(c, 3)
    ms[0]!.ack()
    const t0 = Date.now()
    await c.close()
    expect(Date.now() - t0).toBeLessThan(2000)
    expect(await committed('g', 't')).toEqual([1])
  })

  it('close() waits for a dead-letter write under way and commits the termed message', async () => {
    await twain.createTopic('t')
    await fill('t', 0, 2)
    const c = twain.consumer<string>('t', { group: 'g', ...FAST, deadLetter: 'dlq', commitIntervalMs: 60_000 })
    const [m0, m1] = await pollN(c, 2)
    m0!.ack()
    m1!.term('at close')
    await c.close()
    expect(await twain.length('dlq')).toBe(1)
    expect(await committed('g', 't')).toEqual([2])
  })

  it('await using a consumer closes it (leaves the group) at the end of the block', async () => {
    await twain.createTopic('t')
    await fill('t', 0, 1)
    {
      await using c = twain.consumer<string>('t', { group: 'g', ...FAST })
      ;(await pollN(c, 1))[0]!.ack()
      expect((await twain.describeGroup('g')).members).toHaveLength(1)
    }
    const d = await twain.describeGroup('g')
    expect(d.members).toEqual([])
    expect(d.topics[0]!.committed).toBe(1)
  })

  it('close() is idempotent and ends every open view quietly', async () => {
    await twain.createTopic('t')
    const c = twain.consumer<string>('t', { group: 'g', ...FAST })
    const view = (async () => {
      const got = []
      for await (const m of c) got.push(m)
      return got
    })()
    await waitAssigned(c, 1)
    await Promise.all([c.close(), c.close()])
    await c.close()
    expect(await view).toEqual([])
  })

  it('twain.close() closes its consumers: views end, the members leave the group', async () => {
    await twain.createTopic('t')
    await fill('t', 0, 2)
    const other = await open(tmp.dir)
    try {
      const c = other.consumer<string>('t', { group: 'g', ...FAST, commitIntervalMs: 60_000 })
      const got: number[] = []
      const view = (async () => {
        for await (const m of c) {
          got.push(m.offset)
          m.ack()
        }
        return got
      })()
      await until(() => got.length === 2, 3000, 'both messages')
      await other.close()
      expect(await view).toEqual([0, 1])
      const d = await twain.describeGroup('g')
      expect(d.members).toEqual([])
      expect(d.topics[0]!.committed).toBe(2)
    } finally {
      await other.close()
    }
  })

  it("the consumer's signal leaves the group; a view then ends with AbortError", async () => {
    await twain.createTopic('t')
    const ctrl = new AbortController()
    const c = twain.consumer('t', { group: 'g', ...FAST, signal: ctrl.signal })
    await waitAssigned(c, 1)
    const view = iterN(c, 1).then(
      (v) => ({ ok: true as const, v }),
      (e: unknown) => ({ ok: false as const, e }),
    )
    setTimeout(() => ctrl.abort(), 50)
    const outcome = await view
    await until(async () => (await twain.describeGroup('g')).members.length === 0, 3000, 'the member to leave')
    expect(c.assignments()).toEqual([])
    // MessageStream contract (§3.5): aborting the signal ends a for await by throwing AbortError
    expect(outcome.ok ? 'ended quietly' : outcome.e).toBeInstanceOf(AbortError)
  })
})

describe('an iteration is a view of the membership', () => {
  it('break out of for await, then a new for await continues after the last delivered message', async () => {
    await twain.createTopic('t')
    await fill('t', 0, 10)
    const c = twain.consumer<string>('t', { group: 'g', ...FAST })
    const first = await iterN(c, 3, (m) => m.ack())
    expect(first.map((m) => m.offset)).toEqual([0, 1, 2])
    // still a member 300 ms later (several heartbeats)
    await sleep(300)
    expect(c.assignments()).toHaveLength(1)
    expect((await twain.describeGroup('g')).members).toHaveLength(1)
    const second = await iterN(c, 7, (m) => m.ack())
    expect(second.map((m) => m.offset)).toEqual([3, 4, 5, 6, 7, 8, 9])
    expect(second.every((m) => m.deliveryCount === 1)).toBe(true)
    await c.commit()
    expect(await committed('g', 't')).toEqual([10])
    await c.close()
  })

  it('a message delivered by an ended view can still be acked and is committed', async () => {
    await twain.createTopic('t')
    await fill('t', 0, 4)
    const c = twain.consumer<string>('t', { group: 'g', ...FAST, commitIntervalMs: 60_000 })
    const first = await iterN(c, 2) // not acked inside the loop
    first.forEach((m) => m.ack())
    await c.commit()
    expect(await committed('g', 't')).toEqual([2])
    const next = c.poll()
    expect(next?.offset).toBe(2)
    next?.ack()
    c.pollMany(10).forEach((m) => m.ack())
    await c.close()
  })

  it('RxJS from(consumer).pipe(take(3)) ends only that view; the next view continues', async () => {
    await twain.createTopic('t')
    await fill('t', 0, 8)
    const c = twain.consumer<string>('t', { group: 'g', ...FAST })
    const first = await firstValueFrom(rxFrom(c).pipe(rxTake(3), rxToArray()))
    expect(first.map((m) => m.offset)).toEqual([0, 1, 2])
    first.forEach((m) => m.ack())
    const second = await firstValueFrom(c.asObservable().pipe(rxTake(2), rxToArray()))
    expect(second.map((m) => m.offset)).toEqual([3, 4])
    second.forEach((m) => m.ack())
    const third = await iterN(c, 3, (m) => m.ack())
    expect(third.map((m) => m.offset)).toEqual([5, 6, 7])
    expect([...first, ...second, ...third].every((m) => m.deliveryCount === 1)).toBe(true)
    await c.commit()
    expect(await committed('g', 't')).toEqual([8])
    await c.close()
  })

  it('a message delivered by an ended view can be nacked and the next view gets it again', async () => {
    await twain.createTopic('t')
    await fill('t', 0, 3)
    const c = twain.consumer<string>('t', { group: 'g', ...FAST })
    const [m0] = await iterN(c, 1)
    m0!.nack()
    const next = await iterN(c, 3, (m) => m.ack())
    expect(next.map((m) => [m.offset, m.deliveryCount])).toContainEqual([0, 2])
    expect(next.map((m) => m.offset).sort()).toEqual([0, 1, 2])
    await c.commit()
    expect(await committed('g', 't')).toEqual([3])
    await c.close()
  })

  it('poll() after an ended view continues where the view stopped', async () => {
    await twain.createTopic('t')
    await fill('t', 0, 5)
    const c = twain.consumer<string>('t', { group: 'g', ...FAST })
    await iterN(c, 2, (m) => m.ack())
    const rest = await pollN(c, 3)
    expect(rest.map((m) => m.offset)).toEqual([2, 3, 4])
    rest.forEach((m) => m.ack())
    await c.close()
  })
})

describe('admin', () => {
  it('describeGroup: members, per-partition committed/end/lag; committed is the partition start when nothing was committed', async () => {
    await twain.createTopic('t', { partitions: 2, retention: { maxMessages: 4 } })
    await fill('t', 0, 3)
    const c = twain.consumer<string>('t', { group: 'g', ...FAST, commitIntervalMs: 60_000 })
    await waitAssigned(c, 2)
    const d = await twain.describeGroup('g')
    expect(d.group).toBe('g')
    expect(d.members).toHaveLength(1)
    expect(d.members[0]!.id).toBe(c.memberId)
    expect(sortTp(d.members[0]!.assignments)).toEqual(['t/0', 't/1'])
    expect(d.topics).toEqual([
      { topic: 't', partition: 0, committed: 0, end: 3, lag: 3 },
      { topic: 't', partition: 1, committed: 0, end: 0, lag: 0 },
    ])
    await c.close()
  })

  it('describeGroup reports the partition start as committed after the history was trimmed', async () => {
    await twain.createTopic('t')
    await fill('t', 0, 10)
    await twain.trim('t', { before: { 0: 6 } })
    const start = (await twain.describeTopic('t')).offsets[0]!.start
    expect(start).toBeGreaterThan(0)
    await twain.resetGroup('g', 't', { 0: 0 })
    const d = await twain.describeGroup('g')
    expect(d.topics).toEqual([{ topic: 't', partition: 0, committed: start, end: 10, lag: 10 - start }])
    const c = twain.consumer<string>('t', { group: 'g', ...FAST })
    const ms = await pollN(c, 10 - start)
    expect(ms[0]!.offset).toBe(start)
    ms.forEach((m) => m.ack())
    await c.close()
  })

  it('listGroups lists the groups; deleteGroup removes one (refused while it has live members)', async () => {
    await twain.createTopic('t')
    expect(await twain.listGroups()).toEqual([])
    const a = twain.consumer('t', { group: 'g1', ...FAST })
    const b = twain.consumer('t', { group: 'g2', ...FAST })
    await waitAssigned(a, 1)
    await waitAssigned(b, 1)
    expect(await twain.listGroups()).toEqual(['g1', 'g2'])
    await expect(twain.deleteGroup('g1')).rejects.toBeInstanceOf(InvalidArgumentError)
    await a.close()
    await twain.deleteGroup('g1')
    expect(await twain.listGroups()).toEqual(['g2'])
    await expect(twain.describeGroup('g1')).rejects.toThrow()
    await b.close()
  })

  it('a deleted group starts over from the start', async () => {
    await twain.createTopic('t')
    await fill('t', 0, 3)
    const a = twain.consumer<string>('t', { group: 'g', ...FAST })
    ;(await pollN(a, 3)).forEach((m) => m.ack())
    await a.close()
    expect(await committed('g', 't')).toEqual([3])
    await twain.deleteGroup('g')
    const b = twain.consumer<string>('t', { group: 'g', ...FAST })
    const ms = await pollN(b, 3)
    expect(ms.map((m) => m.offset)).toEqual([0, 1, 2])
    ms.forEach((m) => m.ack())
    await b.close()
  })

  it("resetGroup to 'start', 'end' and { p: offset }; refused while live members consume the topic", async () => {
    await twain.createTopic('t', { partitions: 2 })
    await fill('t', 0, 5)
    await fill('t', 1, 4)
    const a = twain.consumer<string>('t', { group: 'g', ...FAST })
    ;(await pollN(a, 9)).forEach((m) => m.ack())
    await a.commit()
    await expect(twain.resetGroup('g', 't', 'start')).rejects.toBeInstanceOf(InvalidArgumentError)
    expect(await committed('g', 't')).toEqual([5, 4])
    await a.close()

    await twain.resetGroup('g', 't', 'start')
    expect(await committed('g', 't')).toEqual([0, 0])
    const b = twain.consumer<string>('t', { group: 'g', ...FAST, commitIntervalMs: 60_000 })
    const again = await pollN(b, 9)
    expect(again.length).toBe(9)
    again.forEach((m) => m.ack())
    await b.close()

    await twain.resetGroup('g', 't', 'end')
    expect(await committed('g', 't')).toEqual([5, 4])
    await twain.resetGroup('g', 't', { 1: 2 })
    expect(await committed('g', 't')).toEqual([5, 2])
    const c = twain.consumer<string>('t', { group: 'g', ...FAST })
    const got = await pollN(c, 2)
    expect(got.map((m) => [m.partition, m.offset])).toEqual([
      [1, 2],
      [1, 3],
    ])
    await sleep(200) // nothing before the reset point arrives within 200 ms
    expect(c.pollMany(10)).toEqual([])
    got.forEach((m) => m.ack())
    await c.close()
  })

  it('resetGroup is allowed while live members of the group read only other topics', async () => {
    await twain.createTopic('t')
    await twain.createTopic('u')
    await fill('t', 0, 3)
    const c = twain.consumer('u', { group: 'g', ...FAST })
    await waitAssigned(c, 1)
    await twain.resetGroup('g', 't', 'end')
    expect(await committed('g', 't')).toEqual([3])
    await c.close()
  })

  it('rejects bad consumer options with InvalidArgumentError', () => {
    expect(() => twain.consumer('t', { group: '' })).toThrow(InvalidArgumentError)
    expect(() => twain.consumer('t', { group: 'g', from: 'middle' as 'start' })).toThrow(InvalidArgumentError)
    expect(() => twain.consumer('t', { group: 'g', maxInFlight: 0 })).toThrow(InvalidArgumentError)
    expect(() => twain.consumer('t', { group: 'g', mode: 'shared' })).toThrow(InvalidArgumentError)
    expect(() => twain.consumer([], { group: 'g' })).toThrow(InvalidArgumentError)
  })
})
