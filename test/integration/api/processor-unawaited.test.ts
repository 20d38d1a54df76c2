// A processor's outputs sent without awaiting them (`m.send(…)` then `m.ack()`, as in the batch
// idiom): the processor acts on an output that fails (its message is delivered again, or its
// partition is another member's), so a send's promise left alone never crashes the process with an
// unhandled rejection — after nack(), for a partition lost, at close(), or for an output the store
// refuses. An output refused for good is reported through the processor's 'error' event instead,
// and its message is delivered again; an awaited send still rejects.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { TopicNotFoundError, type Processor, type ProcessorMessage, type ProcessorOptions } from '../../../src/index.js'
import { backends } from '../../conformance/backends.js'
import { until } from '../../helpers/wait.js'
import { committed, fill, openOther, twain, untilCommitted, useGroupStore } from '../groups/groups-fixtures.js'

const opts = (o: Partial<ProcessorOptions> = {}): ProcessorOptions => ({
  group: 'etl',
  sessionTimeoutMs: 2000,
  heartbeatIntervalMs: 200,
  commitIntervalMs: 60_000,
  ...o,
})

/** Until `p` has handed out `n` messages (non-blocking polls). */
async function takeN<V>(p: Processor<V>, n: number, ms = 5000): Promise<ProcessorMessage<V>[]> {
  const out: ProcessorMessage<V>[] = []
  await until(() => (out.push(...p.pollMany(n - out.length)), out.length >= n), ms, `${n} processor messages`)
  return out
}

/** Rejections nobody handled while a test ran (Node reports them once the microtasks of a task are done). */
const unhandled: unknown[] = []
const onUnhandled = (e: unknown): void => void unhandled.push(e)
beforeEach(() => {
  unhandled.length = 0
  process.on('unhandledRejection', onUnhandled)
})
afterEach(() => {
  process.off('unhandledRejection', onUnhandled)
})

const codes = (): unknown[] => unhandled.map((e) => (e as { code?: string }).code ?? e)

const kinds = backends().filter((k) => k.name === 'file' || k.name === 'redis')

describe.each(kinds)('unawaited processor sends on $name', (kind) => {
  useGroupStore(kind)

  beforeEach(async () => {
    await twain.createTopic('in', { partitions: 1 })
    await twain.createTopic('out', { keyType: 'string' })
  })

  it('nack() after unawaited sends: no unhandled rejection; the next delivery stores the outputs once', async () => {
    await fill('in', 0, 1)
    const p = twain.processor<string>('in', opts())
    const [m] = await takeN(p, 1)
    void m!.send('out', 'a', 'one') // waits for the topic's configuration
    void m!.send('out', 'b', 'two') // queued behind it
    m!.nack()
    // The redelivery comes in a later task than the rejections: any unhandled one was reported by then.
    const [again] = await takeN(p, 1)
    expect(again!.deliveryCount).toBe(2)
    void again!.send('out', 'a', 'one')
    void again!.send('out', 'b', 'two') // queued at once now: the topic's configuration is known
    again!.nack()
    const [last] = await takeN(p, 1)
    for (const [k, v] of [
      ['a', 'one'],
      ['b', 'two'],
    ] as const)
      void last!.send('out', k, v)
    last!.ack()
    await untilCommitted(p, 'etl', 'in', 1)
    await p.close()
    expect(codes()).toEqual([])
    expect(await twain.length('out')).toBe(2)
  })

  it('an output to a missing topic, unawaited then acked: reported as an error event, delivered again, stored once the topic is there', async () => {
    await fill('in', 0, 1)
    const p = twain.processor<string>('in', opts())
    const errors: Error[] = []
    p.on('error', (e) => errors.push(e))
    const [m] = await takeN(p, 1)
    void m!.send('later', 'k', 'v')
    m!.ack()
    await until(() => errors.length > 0, 5000, 'the error event')
    expect(errors[0]).toBeInstanceOf(TopicNotFoundError)
    expect(errors[0]!.message).toContain('later')
    await twain.createTopic('later', { keyType: 'string' })
    const [again] = await takeN(p, 1, 10_000) // the partition read again from its commit
    expect(again!.offset).toBe(0)
    void again!.send('later', 'k', 'v')
    again!.ack()
    await untilCommitted(p, 'etl', 'in', 1)
    await p.close()
    expect(codes()).toEqual([])
    expect(await twain.length('later')).toBe(1)
  })

  it('without an error listener, such a failure is a process warning naming the processor', async () => {
    await fill('in', 0, 1)
    const warnings: Error[] = []
    const onWarning = (w: Error): void => void (w.name === 'TwainmqWarning' && warnings.push(w))
    process.on('warning', onWarning)
    try {
      const p = twain.processor<string>('in', opts())
      const [m] = await takeN(p, 1)
      void m!.send('absent', 'k', 'v')
      m!.ack()
      await until(() => warnings.length > 0, 5000, 'a TwainmqWarning')
      expect(warnings[0]!.message).toMatch(
        /^twainmq processor \S+ of group "etl": ERR_TOPIC_NOT_FOUND: .*"absent".*processor\.on\('error', …\)/,
      )
      await p.close()
    } finally {
      process.off('warning', onWarning)
    }
    expect(codes()).toEqual([])
  })

  it('an awaited send to a missing topic still rejects', async () => {
    await fill('in', 0, 1)
    const p = twain.processor<string>('in', opts())
    p.on('error', () => undefined)
    const [m] = await takeN(p, 1)
    await expect(m!.send('nowhere', 'k', 'v')).rejects.toBeInstanceOf(TopicNotFoundError)
    m!.nack()
    await p.close()
    expect(codes()).toEqual([])
  })

  it('a member that lost a partition: its unawaited send is refused unseen, nothing of it stored', async () => {
    await twain.createTopic('two', { partitions: 2 })
    await fill('two', 0, 1)
    await fill('two', 1, 1)
    const a = twain.processor<string>('two', opts({ drainTimeoutMs: 100 }))
    const held = await takeN(a, 2)
    for (const m of held) await m.send('out', `k${m.partition}`, m.value)
    const b = (await openOther()).processor<string>('two', opts())
    // `a` gives one partition up (its message un-acked past drainTimeoutMs); `b` takes it.
    const [moved] = await takeN(b, 1, 10_000)
    const lost = held.find((m) => m.partition === moved!.partition)!
    void lost.send('out', 'late', 'zombie') // refused: the partition is b's
    void moved!.send('out', `k${moved!.partition}`, moved!.value) // recognised: stored by a
    moved!.ack()
    held.filter((m) => m !== lost).forEach((m) => m.ack())
    await until(
      async () => (await Promise.all([a.commit(), b.commit()]), (await committed('etl', 'two')).join() === '1,1'),
      5000,
      'the commits',
    )
    await Promise.all([a.close(), b.close()])
    expect(codes()).toEqual([])
    expect(await twain.length('out')).toBe(2)
  })

  it('close() with an output queued and its message not acked: nothing unhandled; the next member stores it once', async () => {
    await fill('in', 0, 2)
    const p = twain.processor<string>('in', opts())
    const [m0, m1] = await takeN(p, 2)
    await m0!.send('out', 'k0', 'v0')
    m0!.ack()
    void m1!.send('out', 'k1', 'v1') // queued: its lane waits a turn of the event loop
    await p.close()
    const q = twain.processor<string>('in', opts())
    const [again] = await takeN(q, 1)
    expect(again!.offset).toBe(1)
    void again!.send('out', 'k1', 'v1')
    again!.ack()
    await untilCommitted(q, 'etl', 'in', 2)
    await q.close()
    expect(codes()).toEqual([])
    expect(await twain.length('out')).toBe(2)
  })
})
