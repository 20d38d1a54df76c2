// twain.processor() through the public API, on a directory and on Redis: a message's outputs
// (`m.send`) resolve with where they are stored and are stored once per output partition — across
// nack and redelivery, a seek back, a member restarted without its ack, a partition handed to
// another member, the batch operator and RxJS; a nacked message's unwritten outputs are dropped; a
// dead letter is an output of its message (one per input); sends after ack, with a bad key or to a
// missing topic are refused by name.
import { firstValueFrom, from, take, toArray } from 'rxjs'
import { describe, expect, it } from 'vitest'
import {
  FencedError,
  InvalidArgumentError,
  InvalidKeyError,
  TopicNotFoundError,
  type Processor,
  type ProcessorMessage,
  type ProcessorOptions,
  type Twain,
} from '../../../src/index.js'
import { batch, pipe } from '../../../src/operators/index.js'
import { backends } from '../../conformance/backends.js'
import { until } from '../../helpers/wait.js'
import { committed, fill, openOther, twain, useGroupStore } from '../groups/groups-fixtures.js'

const SOURCE = 'x-twain-source'

const opts = (o: Partial<ProcessorOptions> = {}): ProcessorOptions => ({
  group: 'etl',
  sessionTimeoutMs: 2000,
  heartbeatIntervalMs: 200,
  commitIntervalMs: 60_000, // commits are the tests' business: commit() or close()
  ...o,
})

/** Until `p` has handed out `n` messages (non-blocking polls). */
async function takeN<V>(p: Processor<V>, n: number, ms = 5000): Promise<ProcessorMessage<V>[]> {
  const out: ProcessorMessage<V>[] = []
  await until(() => (out.push(...p.pollMany(n - out.length)), out.length >= n), ms, `${n} processor messages`)
  return out
}

/** Every stored message of `topic` as `partition@offset value`, with its source header. */
async function stored(t: Twain, topic: string): Promise<Array<{ at: string; value: unknown; source?: string }>> {
  const out = []
  for await (const m of t.history(topic))
    out.push({ at: `${m.partition}@${m.offset}`, value: m.value, source: m.headers[SOURCE] })
  return out
}

// The file backend and one Redis: the Cluster kind runs the backend contract (test/contract/sourced-append.test.ts).
const kinds = backends().filter((k) => k.name === 'file' || k.name === 'redis')

describe.each(kinds)('processor on $name', (kind) => {
  useGroupStore(kind)

  async function setup(outPartitions = 1): Promise<void> {
    await twain.createTopic('in', { partitions: 1 })
    await twain.createTopic('out', { partitions: outPartitions, keyType: 'string' })
  }

  it('send resolves with where the output is stored; the output carries its source', async () => {
    await setup(3)
    await fill('in', 0, 3)
    const p = twain.processor<string>('in', opts())
    const ms = await takeN(p, 3)
    const results = await Promise.all(ms.map((m) => m.send('out', `k-${m.offset}`, `${m.value}!`)))
    ms.forEach((m) => m.ack())
    await p.close()
    const all = await stored(twain, 'out')
    expect(all).toHaveLength(3)
    for (const [i, r] of results.entries()) {
      expect(r.topic).toBe('out')
      expect(r.duplicate).toBeUndefined()
      const there = all.find((s) => s.at === `${r.partition}@${r.offset}`)
      expect(there?.value).toBe(`p0-${i}!`)
      expect(there?.source).toMatch(new RegExp(`^etl in@\\d+ 0 ${i} 0 \\d+ \\d+$`))
    }
    expect(await committed('etl', 'in')).toEqual([3])
  })

  it('a message delivered again after nack() finds its outputs: duplicate: true, the same offsets, nothing stored twice', async () => {
    await setup(2)
    await fill('in', 0, 1)
    const p = twain.processor<string>('in', opts())
    const [m] = await takeN(p, 1)
    const first = [await m!.send('out', 'a', 'one'), await m!.send('out', 'b', 'two')]
    m!.nack()
    const [again] = await takeN(p, 1)
    expect([again!.offset, again!.deliveryCount]).toEqual([0, 2])
    const second = await Promise.all([again!.send('out', 'a', 'one'), again!.send('out', 'b', 'two')])
    expect(second).toEqual(first.map((r) => ({ ...r, duplicate: true })))
    // A third output the first delivery never sent is new.
    const third = await again!.send('out', 'c', 'three')
    expect(third.duplicate).toBeUndefined()
    again!.ack()
    await p.close()
    expect((await stored(twain, 'out')).map((s) => s.value).sort()).toEqual(['one', 'three', 'two'])
    expect(await committed('etl', 'in')).toEqual([1])
  })

  it('nack() before an output is written drops it: it rejects and is not stored; the next delivery stores it', async () => {
    await setup()
    await fill('in', 0, 1)
    const p = twain.processor<string>('in', opts())
    const discarded = async (send: Promise<unknown>): Promise<string | undefined> =>
      send.then(
        () => undefined,
        (e: unknown) => (e as { code?: string }).code,
      )
    const [m] = await takeN(p, 1)
    // The first output to a topic waits for the topic's configuration; a later one is queued at once: both are dropped.
    const first = m!.send('out', 'a', 'v')
    m!.nack()
    expect(await discarded(first)).toBe('ERR_DISCARDED')
    const [again] = await takeN(p, 1)
    const queued = again!.send('out', 'a', 'v')
    again!.nack()
    expect(await discarded(queued)).toBe('ERR_DISCARDED')
    expect(await twain.length('out')).toBe(0)
    const [third] = await takeN(p, 1)
    expect(third!.deliveryCount).toBe(3)
    expect(await third!.send('out', 'a', 'v')).toEqual({ topic: 'out', partition: 0, offset: 0 })
    third!.ack()
    await p.close()
    expect(await twain.length('out')).toBe(1)
    expect(await committed('etl', 'in')).toEqual([1])
  })

  it('term() writes one dead letter per input, however often the input is termed', async () => {
    await setup()
    await twain.createTopic('dlq', { partitions: 2 })
    await fill('in', 0, 1)
    const p = twain.processor<string>('in', opts({ deadLetter: 'dlq' }))
    const errors: Error[] = []
    p.on('error', (e) => errors.push(e))
    const [m] = await takeN(p, 1)
    await m!.send('out', 'a', 'kept')
    m!.term('poison')
    await until(async () => (await twain.length('dlq')) === 1, 5000, 'the dead letter')
    // Nothing committed yet: the member reads the input again (as a successor would after a crash) and terms it again.
    p.seek('in', 0, 0)
    const [again] = await takeN(p, 1)
    expect(again!.offset).toBe(0)
    expect(await again!.send('out', 'a', 'kept')).toMatchObject({ duplicate: true })
    again!.term('poison again')
    await until(
      async () => (await p.commit(), (await committed('etl', 'in'))[0] === 1),
      5000,
      'the second term to be committed',
    )
    await p.close()
    expect(errors).toEqual([])
    const dead = await stored(twain, 'dlq')
    expect(dead).toHaveLength(1)
    expect(dead[0]!.value).toBe('p0-0')
    expect(dead[0]!.source).toMatch(/^etl in@\d+ 0 0 2147483647 /)
    expect(await twain.length('out')).toBe(1)
  })

  it('a processor restarted without its acks (another instance) finds the stored outputs', async () => {
    await setup(2)
    await fill('in', 0, 4)
    const p = twain.processor<string>('in', opts({ drainTimeoutMs: 100 }))
    const ms = await takeN(p, 4)
    const first = await Promise.all(ms.map((m) => m.send('out', `k${m.offset}`, m.value)))
    ms[0]!.ack() // only the first is acked: the others come back to the next member
    await until(async () => (await p.commit(), (await committed('etl', 'in'))[0] === 1), 5000, 'the first ack')
    await p.close()
    expect(await committed('etl', 'in')).toEqual([1])
    const other = await openOther()
    const q = other.processor<string>('in', opts())
    const again = await takeN(q, 3)
    expect(again.map((m) => m.offset)).toEqual([1, 2, 3])
    const second = await Promise.all(again.map((m) => m.send('out', `k${m.offset}`, m.value)))
    expect(second).toEqual(first.slice(1).map((r) => ({ ...r, duplicate: true })))
    again.forEach((m) => m.ack())
    await q.close()
    expect((await stored(other, 'out')).map((s) => s.value).sort()).toEqual(['p0-0', 'p0-1', 'p0-2', 'p0-3'])
    expect(await committed('etl', 'in')).toEqual([4])
  })

  it('a member that lost a partition gets FencedError from send; the new owner finds what it stored', async () => {
    await twain.createTopic('in', { partitions: 2 })
    await twain.createTopic('out', { keyType: 'string' })
    await fill('in', 0, 1)
    await fill('in', 1, 1)
    const a = twain.processor<string>('in', opts({ drainTimeoutMs: 100 }))
    const held = await takeN(a, 2)
    const first = new Map<number, unknown>()
    for (const m of held) first.set(m.partition, await m.send('out', `k${m.partition}`, m.value))
    const b = (await openOther()).processor<string>('in', opts())
    // `a` gives one partition up (its message un-acked past drainTimeoutMs); `b` takes it.
    const [moved] = await takeN(b, 1, 10_000)
    const lost = held.find((m) => m.partition === moved!.partition)!
    const e = await lost.send('out', 'late', 'zombie').catch((err: unknown) => err)
    expect(e).toBeInstanceOf(FencedError)
    expect(await moved!.send('out', `k${moved!.partition}`, moved!.value)).toEqual({
      ...(first.get(moved!.partition) as object),
      duplicate: true,
    })
    moved!.ack()
    held.filter((m) => m !== lost).forEach((m) => m.ack())
    await Promise.all([a.close(), b.close()])
    expect((await stored(twain, 'out')).map((s) => s.value).sort()).toEqual(['p0-0', 'p1-0'])
    expect(await committed('etl', 'in')).toEqual([1, 1])
  })

  it("batch(): b.ack() commits once the batch's outputs are stored", async () => {
    await setup(3)
    await fill('in', 0, 20)
    const p = twain.processor<string>('in', opts())
    let seen = 0
    for await (const b of pipe(p, batch({ size: 5 }))) {
      for (const m of b) void m.send('out', `k${m.offset}`, m.value.toUpperCase()) // not awaited: ack waits for them
      b.ack()
      if ((seen += b.length) === 20) break
    }
    await p.close()
    expect(await committed('etl', 'in')).toEqual([20])
    const all = await stored(twain, 'out')
    expect(all.map((s) => s.value).sort()).toEqual(Array.from({ length: 20 }, (_, i) => `P0-${i}`).sort())
  })

  it('works as an RxJS source: from(processor)', async () => {
    await setup()
    await fill('in', 0, 5)
    const p = twain.processor<string>('in', opts())
    const ms = await firstValueFrom(from(p).pipe(take(5), toArray()))
    const results = await Promise.all(ms.map((m) => m.send('out', 'k', m.value)))
    ms.forEach((m) => m.ack())
    await p.close()
    expect(results.map((r) => r.offset)).toEqual([0, 1, 2, 3, 4])
    expect(await committed('etl', 'in')).toEqual([5])
  })

  it('refuses a send after ack(), a bad key (naming it) and a missing topic', async () => {
    await twain.createTopic('in', { partitions: 1 })
    await twain.createTopic('out', { keyType: 'u32' })
    await fill('in', 0, 3)
    const p = twain.processor<string>('in', opts())
    const [m0, m1, m2] = await takeN(p, 3)
    m0!.ack()
    const late = await m0!.send('out', 1, 'late').then(
      () => new Error('stored'),
      (err: unknown) => err as Error,
    )
    expect(late).toBeInstanceOf(InvalidArgumentError)
    expect(late.message).toMatch(/after the message in\/0@0 was settled/)
    const bad = await m1!.send('out', 'not-a-number', 'v').then(
      () => new Error('stored'),
      (err: unknown) => err as Error,
    )
    expect(bad).toBeInstanceOf(InvalidKeyError)
    expect(bad.message).toContain('not-a-number')
    const missing = await m2!.send('nowhere', 1, 'v').then(
      () => new Error('stored'),
      (err: unknown) => err as Error,
    )
    expect(missing).toBeInstanceOf(TopicNotFoundError)
    expect(missing.message).toContain('nowhere')
    // A message whose output failed is delivered again rather than acked.
    m1!.ack()
    m2!.nack()
    await p.close()
    expect(await twain.length('out')).toBe(0)
    expect(await committed('etl', 'in')).toEqual([1])
  })
})
