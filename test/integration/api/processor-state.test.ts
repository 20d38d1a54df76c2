// A processor's keyed state store (`twain.processor(topic, { state })`, `m.state`; README "State
// stores") through the public API, on a directory and on Redis: reads see earlier messages' writes;
// a message's writes reach the compacted changelog when it is acked; a successor (another
// instance) restores the state and starts after the last input the changelog holds, also when the
// group's commit lagged; nack() takes the partition back so no write counts twice; the changelog
// topic is created co-partitioned and checked; bad use is refused by name.
import { describe, expect, it, vi } from 'vitest'
import {
  InvalidArgumentError,
  InvalidKeyError,
  MessageTooLargeError,
  type Processor,
  type ProcessorMessage,
  type ProcessorOptions,
  type Twain,
} from '../../../src/index.js'
import { backends } from '../../conformance/backends.js'
import { until } from '../../helpers/wait.js'
import { committed, openOther, twain, useGroupStore } from '../groups/groups-fixtures.js'

const opts = (o: Partial<ProcessorOptions> = {}): ProcessorOptions => ({
  group: 'counter',
  state: 'counts',
  from: 'start',
  sessionTimeoutMs: 2000,
  heartbeatIntervalMs: 200,
  commitIntervalMs: 60_000, // commits are the tests' business: commit() or close()
  ...o,
})

/** Inputs `u<i % users>` → value `i`, on partition `i % partitions` of 'in'. */
async function inputs(n: number, users: number, partitions: number): Promise<void> {
  await twain
    .producer<string, string>('in')
    .sendBatch(
      Array.from({ length: n }, (_, i) => ({ key: `u${i % users}`, value: String(i), partition: i % partitions })),
    )
}

/** Count each input per key in the state, and send the running count to 'out'; until `n` messages are acked. */
async function count(p: Processor<string, string>, n: number): Promise<void> {
  let acked = 0
  for await (const m of p) {
    const c = (m.state.get<number>(m.key) ?? 0) + 1
    m.state.set(m.key, c)
    void m.send('out', m.key, `${m.value}:${c}`)
    m.ack()
    if (++acked === n) break
  }
}

/** The latest value of every key of `topic`. */
async function latest(t: Twain, topic: string): Promise<Map<unknown, unknown>> {
  const out = new Map<unknown, unknown>()
  for await (const m of t.history(topic)) {
    if (m.value === null) out.delete(m.key)
    else out.set(m.key, m.value)
  }
  return out
}

const kinds = backends().filter((k) => k.name === 'file' || k.name === 'redis')

describe.each(kinds)('processor state on $name', (kind) => {
  useGroupStore(kind)

  async function setup(partitions = 2): Promise<void> {
    await twain.createTopic('in', { partitions, keyType: 'string' })
    await twain.createTopic('out', { partitions: 1, keyType: 'string' })
  }

  it('counts per key: reads see earlier writes, the changelog holds the latest count of each key', async () => {
    await setup()
    await inputs(60, 4, 2)
    const p = twain.processor<string, string>('in', opts())
    await count(p, 60)
    await p.close()
    const info = await twain.describeTopic('counter-counts-changelog')
    expect([info.partitions, info.compact]).toEqual([2, true])
    expect(await latest(twain, 'counter-counts-changelog')).toEqual(
      new Map([
        ['u0', 15],
        ['u1', 15],
        ['u2', 15],
        ['u3', 15],
      ]),
    )
    const outs: string[] = []
    for await (const m of twain.history<string>('out')) outs.push(`${m.key} ${m.value}`)
    expect(outs).toHaveLength(60)
    // Each key's counts run 1..15 in input order.
    for (const u of ['u0', 'u1', 'u2', 'u3']) {
      const mine = outs.filter((o) => o.startsWith(`${u} `)).map((o) => Number(o.split(':')[1]))
      expect(mine.sort((a, b) => a - b)).toEqual(Array.from({ length: 15 }, (_, i) => i + 1))
    }
  })

  it("the inputs acked while a partition's flush is written share its next one: each key's last write only", async () => {
    await setup(1)
    await inputs(2000, 2, 1)
    const p = twain.processor<string, string>('in', opts())
    await count(p, 2000)
    await p.close()
    const records: Array<{ key: unknown; value: unknown }> = []
    for await (const m of twain.history('counter-counts-changelog')) records.push({ key: m.key, value: m.value })
    // Every count was written in a flush, but a count overwritten within its flush was not.
    expect(records.length).toBeLessThan(2000)
    expect(await latest(twain, 'counter-counts-changelog')).toEqual(
      new Map([
        ['u0', 1000],
        ['u1', 1000],
      ]),
    )
    // Each key's records rise: a flush writes the last count of the inputs it holds.
    for (const u of ['u0', 'u1']) {
      const counts = records.filter((r) => r.key === u).map((r) => r.value as number)
      expect(counts).toEqual([...counts].sort((a, b) => a - b))
    }
  })

  it('a successor restores the state and starts after the last input the changelog holds, though the commit lagged', async () => {
    await setup()
    await inputs(40, 2, 2)
    const other = await openOther()
    const first = other.processor<string, string>('in', opts())
    await count(first, 40)
    await until(async () => (await latest(twain, 'counter-counts-changelog')).get('u0') === 20, 10_000, 'the writes')
    // The group's commit is still the start (committed when the partitions were assigned); the
    // first member's store closes under it: it neither leaves nor commits.
    expect(await committed('counter', 'in')).toEqual([0, 0])
    await other.close()
    await inputs(10, 2, 2)
    const second = twain.processor<string, string>('in', opts({ sessionTimeoutMs: 2000 }))
    const seen: Array<{ key: string; value: string; count: number }> = []
    for await (const m of second) {
      const c = (m.state.get<number>(m.key) ?? 0) + 1
      m.state.set(m.key, c)
      seen.push({ key: m.key, value: m.value, count: c })
      m.ack()
      if (seen.length === 10) break
    }
    // Only the 10 new inputs come (the first 40 are in the changelog), counted on from 20.
    expect(seen.map((s) => Number(s.value)).sort((a, b) => a - b)).toEqual(Array.from({ length: 10 }, (_, i) => i))
    expect(Math.max(...seen.filter((s) => s.key === 'u0').map((s) => s.count))).toBe(25)
    await second.close()
    expect(await committed('counter', 'in')).toEqual([25, 25])
  })

  it('nack() takes the partition back to its first message not acked: what later messages wrote is not counted twice', async () => {
    await setup(1)
    await inputs(6, 1, 1)
    const p = twain.processor<string, string>('in', opts())
    const deliveries: string[] = []
    let nacked = false
    for await (const m of p) {
      const c = (m.state.get<number>(m.key) ?? 0) + 1
      m.state.set(m.key, c)
      deliveries.push(`${m.offset}:${c}`)
      if (m.offset === 2 && !nacked) {
        nacked = true
        m.nack()
        continue
      }
      m.ack()
      if (m.offset === 5) break
    }
    // Whatever came again (messages whose ack had not taken effect yet), every delivery counted as
    // if the nack never was: offset o counts o + 1.
    expect(deliveries.every((d) => Number(d.split(':')[1]) === Number(d.split(':')[0]) + 1)).toBe(true)
    expect(deliveries.filter((d) => d.startsWith('2:'))).toHaveLength(2)
    await p.close()
    expect(await latest(twain, 'counter-counts-changelog')).toEqual(new Map([['u0', 6]]))
    expect(await committed('counter', 'in')).toEqual([6])
  })

  it('an output that fails takes the partition back: the message comes again reading what it first read', async () => {
    await setup(1)
    await inputs(3, 1, 1)
    const p = twain.processor<string, string>('in', opts())
    const reads: string[] = []
    let sends = 0
    for await (const m of p) {
      const c = m.state.get<number>('c') ?? 0
      m.state.set('c', c + 1)
      reads.push(`${m.offset}:${c}`)
      // Offset 0's first output goes to a topic not there yet: it fails, then the topic is made.
      if (m.offset === 0 && sends++ === 0) await m.send('missing', 'k', 'x').catch(() => undefined)
      if (m.offset === 0 && sends === 1) await twain.createTopic('missing', { partitions: 1, keyType: 'string' })
      m.ack()
      // At least twice: a loaded machine's lapsed session can deliver it once more.
      if (m.offset === 2 && reads.filter((r) => r.startsWith('0:')).length >= 2) break
    }
    // Every delivery of offset o read o: nothing a later message wrote, nor its own first write.
    expect(reads.every((r) => r.split(':')[0] === r.split(':')[1])).toBe(true)
    await p.close()
    expect(await latest(twain, 'counter-counts-changelog')).toEqual(new Map([['c', 3]]))
  })

  it("a partition taken back is read again once its pause ends by the wall clock, though the pause's timer fires early", async () => {
    await setup(1)
    await inputs(2, 1, 1)
    // The wall clock runs 2% slow against the timers: a timer of the pause fires before
    // Date.now() says the pause is over (as it may on a loaded machine, by a millisecond).
    const real = Date.now.bind(Date)
    const t0 = real()
    const slow = vi.spyOn(Date, 'now').mockImplementation(() => t0 + Math.floor((real() - t0) * 0.98))
    try {
      const p = twain.processor<string, string>('in', opts())
      const seen: number[] = []
      for await (const m of p) {
        seen.push(m.offset)
        if (seen.length === 1)
          m.nack({ delayMs: 1000 }) // the partition is taken back, paused for 1 s
        else m.ack()
        if (seen.length === 3) break
      }
      expect(seen).toEqual([0, 0, 1])
      await p.close()
    } finally {
      slow.mockRestore()
    }
  })

  it('term() without a dead-letter topic lets the later messages go on; of a message that wrote state it is refused', async () => {
    await setup(1)
    await inputs(4, 1, 1)
    const p = twain.processor<string, string>('in', opts())
    for await (const m of p) {
      if (m.offset === 1) {
        m.term('bad input') // wrote nothing: dropped, and it takes its turn
        continue
      }
      m.state.set(m.key, Number(m.value))
      if (m.offset === 2) expect(() => m.term('no')).toThrow(/which wrote state/)
      m.ack()
      if (m.offset === 3) break
    }
    await p.close()
    expect(await committed('counter', 'in')).toEqual([4])
    expect(await latest(twain, 'counter-counts-changelog')).toEqual(new Map([['u0', 3]]))
  })

  it('a value that cannot be stored is refused at set(), and so are more than 1 MiB of writes by one message', async () => {
    await setup(1)
    await inputs(2, 1, 1)
    const p = twain.processor<string, string>('in', opts())
    for await (const m of p) {
      expect(() => m.state.set('big', 'x'.repeat(3 * 1024 * 1024))).toThrow(MessageTooLargeError)
      m.state.set('a', 'y'.repeat(600 * 1024))
      expect(() => m.state.set('b', 'z'.repeat(600 * 1024))).toThrow(
        /more than 1048576 \(its writes are stored in one call\)/,
      )
      m.state.set('a', 'small') // the last write of a key is what counts
      m.state.set('b', 'z'.repeat(600 * 1024))
      m.ack()
      if (m.offset === 1) break
    }
    await p.close()
    const all = await latest(twain, 'counter-counts-changelog')
    expect([all.get('a'), (all.get('b') as string).length, all.has('big')]).toEqual(['small', 600 * 1024, false])
    expect(await committed('counter', 'in')).toEqual([2])
  })

  it('keys of any type, deletes, entries() and size; values as stored', async () => {
    await setup(1)
    await inputs(1, 1, 1)
    const p = twain.processor<string, string>('in', opts())
    const [m] = await new Promise<ProcessorMessage<string, string>[]>((resolve) => {
      const got: ProcessorMessage<string, string>[] = []
      void (async () => {
        for await (const x of p) {
          got.push(x)
          break
        }
        resolve(got)
      })()
    })
    const s = m!.state
    s.set('a', { n: 1, tags: ['x'] })
    s.set(1, 'one')
    s.set(1n, 2.5)
    s.set('\0odd', true)
    s.set('gone', 'x')
    s.delete('gone')
    expect([s.get('a'), s.get(1), s.get(1n), s.get('\0odd'), s.has('gone'), s.size]).toEqual([
      { n: 1, tags: ['x'] },
      'one',
      2.5,
      true,
      false,
      4,
    ])
    expect(new Map(s.entries())).toEqual(
      new Map<unknown, unknown>([
        ['a', { n: 1, tags: ['x'] }],
        [1, 'one'],
        [1n, 2.5],
        ['\0odd', true],
      ]),
    )
    expect(() => s.set('x', undefined)).toThrow(/needs a value, got undefined: use delete\(\)/)
    expect(() => s.set({} as unknown as string, 1)).toThrow(InvalidKeyError)
    m!.ack()
    expect(() => s.set('late', 1)).toThrow(InvalidArgumentError)
    await p.close()
    // Restored as written, by another instance.
    const other = await openOther()
    const q = other.processor<string, string>('in', opts())
    await inputs(1, 1, 1)
    for await (const x of q) {
      expect(new Map(x.state.entries())).toEqual(
        new Map<unknown, unknown>([
          ['a', { n: 1, tags: ['x'] }],
          [1, 'one'],
          [1n, 2.5],
          ['\0odd', true],
        ]),
      )
      x.ack()
      break
    }
    await q.close()
  })

  it('refuses bad use by name: m.state without a store, two topics, a bad store name, seek, a changelog of other partitions', async () => {
    await setup(2)
    await twain.createTopic('in2', { partitions: 2, keyType: 'string' })
    await inputs(1, 1, 2)
    expect(() => twain.processor('in', { ...opts(), group: 'g2', state: 'bad name' })).toThrow(/got "bad name"/)
    expect(() => twain.processor(['in', 'in2'], { ...opts(), group: 'g3' })).toThrow(/reads one topic.*in, in2/)
    const p = twain.processor<string, string>('in', opts())
    expect(() => p.seek('in', 0, 0)).toThrow(/cannot move its partitions/)
    await p.close()
    const plain = twain.processor<string, string>('in', { ...opts(), group: 'plain', state: undefined })
    for await (const m of plain) {
      expect(() => m.state).toThrow(/has no state store/)
      m.ack()
      break
    }
    await plain.close()
    await twain.createTopic('g4-counts-changelog', { partitions: 3, keyType: 'string', compact: true })
    const errors: Error[] = []
    const q = twain.processor<string, string>('in', { ...opts(), group: 'g4' })
    q.on('error', (e) => errors.push(e))
    // It cannot be mended by trying again: the processor fails with it (its iteration throws it).
    const loop = (async () => {
      for await (const m of q) m.ack()
    })()
    await expect(loop).rejects.toThrow(/"g4-counts-changelog" has 3 partitions, topic "in" has 2/)
    expect(errors[0]?.message).toMatch(/"g4-counts-changelog" has 3 partitions, topic "in" has 2/)
    await q.close()
  })
})
