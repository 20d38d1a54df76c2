import { from } from 'ix/asynciterable'
import { describe, expect, it, vi } from 'vitest'
import { AbortError, InvalidArgumentError } from '../../../src/index.js'
import { batch, pipe, type MessageBatch } from '../../../src/operators/index.js'
import {
  fakeMessage,
  fakeMessages,
  fromArray,
  ManualSource,
  settle,
  settlements,
  within,
  type FakeMessage,
} from './fakes.js'
import { PROMPT_MS } from '../../helpers/wait.js'

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = []
  for await (const v of it) out.push(v)
  return out
}

const ids = (b: readonly FakeMessage[]): number[] => b.map((m) => m.id)

describe('batch()', () => {
  it('groups in order into batches of at most `size`, the remainder last', async () => {
    const out = await collect(pipe(fromArray(fakeMessages(10)), batch({ size: 3 })))
    expect(out.map(ids)).toEqual([[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]])
  })

  it('emits frozen real arrays with ack/nack/term; map() gives a plain array', async () => {
    const [b] = await collect(pipe(fromArray(fakeMessages(2)), batch({ size: 5 })))
    expect(Array.isArray(b)).toBe(true)
    expect(b).toBeInstanceOf(Array)
    expect(Object.isFrozen(b)).toBe(true)
    expect(b!.length).toBe(2)
    expect(() => (b as unknown as FakeMessage[]).push(fakeMessage(9))).toThrow(TypeError)
    const mapped = b!.map((m) => m.id)
    expect(mapped).toEqual([0, 1])
    expect('ack' in mapped).toBe(false)
    expect(JSON.stringify([...b!].map((m) => m.id))).toBe('[0,1]')
  })

  it('batch.ack() acks every message once; nack(options) and term(reason) reach every message', async () => {
    const msgs = fakeMessages(6)
    const [b1, b2, b3] = await collect(pipe(fromArray(msgs), batch({ size: 2 })))
    expect(msgs.map(settlements)).toEqual([0, 0, 0, 0, 0, 0]) // batch itself settles nothing
    b1!.ack()
    b2!.nack({ delayMs: 50 })
    b3!.term('bad batch')
    expect(msgs.map((m) => [m.acks, m.nacks, m.terms])).toEqual([
      [1, 0, 0],
      [1, 0, 0],
      [0, 1, 0],
      [0, 1, 0],
      [0, 0, 1],
      [0, 0, 1],
    ])
    expect(msgs[2]!.nackOptions).toEqual([{ delayMs: 50 }])
    expect(msgs[5]!.termReasons).toEqual(['bad batch'])
  })

  it('batch.ack() still acks the rest when one ack throws, then rethrows', async () => {
    const msgs = fakeMessages(3)
    msgs[1]!.ack = () => {
      throw new Error('ack failed')
    }
    const [b] = await collect(pipe(fromArray(msgs), batch({ size: 3 })))
    expect(() => b!.ack()).toThrow('ack failed')
    expect([msgs[0]!.acks, msgs[2]!.acks]).toEqual([1, 1])
  })

  it('emits a partial batch maxWaitMs after its first message, without losing the pending read', async () => {
    const src = new ManualSource<FakeMessage>()
    const it = pipe(src, batch({ size: 10, maxWaitMs: 30 }))[Symbol.asyncIterator]()
    const t0 = performance.now()
    src.push(fakeMessage(0), fakeMessage(1))
    const first = await it.next()
    const waited = performance.now() - t0
    expect(ids(first.value as MessageBatch<FakeMessage>)).toEqual([0, 1])
    expect(waited).toBeGreaterThanOrEqual(25)
    expect(waited).toBeLessThan(PROMPT_MS)
    expect(src.pending).toBe(true) // the read that lost to the timer is still waiting
    const calls = src.nextCalls
    const second = it.next()
    await settle()
    expect(src.nextCalls).toBe(calls) // ...and is reused, not repeated
    src.push(fakeMessage(2))
    src.end()
    expect(ids((await second).value as MessageBatch<FakeMessage>)).toEqual([2])
    expect((await it.next()).done).toBe(true)
  })

  it('counts maxWaitMs from the first message of the batch, not from the last', async () => {
    // Time is the subject: on a fake clock, so a loaded machine cannot move the bounds.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] })
    try {
      const src = new ManualSource<FakeMessage>()
      const it = pipe(src, batch({ size: 10, maxWaitMs: 100 }))[Symbol.asyncIterator]()
      let emitted = false
      const next = it.next().then((r) => ((emitted = true), r))
      src.push(fakeMessage(0))
      await vi.advanceTimersByTimeAsync(60) // the second message comes 60 ms in, within maxWaitMs
      src.push(fakeMessage(1))
      await vi.advanceTimersByTimeAsync(39)
      expect(emitted).toBe(false) // 99 ms after the first message
      await vi.advanceTimersByTimeAsync(1)
      expect(emitted).toBe(true) // 100 ms after the first (a timer restarted at message 1 would wait until 160)
      expect(ids((await next).value as MessageBatch<FakeMessage>)).toEqual([0, 1])
      await it.return!()
    } finally {
      vi.useRealTimers()
    }
  })

  it('sets one timer for a batch, not one per message', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] })
    const armed = vi.spyOn(globalThis, 'setTimeout')
    try {
      const src = new ManualSource<FakeMessage>()
      const it = pipe(src, batch({ size: 100, maxWaitMs: 50 }))[Symbol.asyncIterator]()
      const next = it.next()
      for (let i = 0; i < 60; i++) {
        src.push(fakeMessage(i))
        await vi.advanceTimersByTimeAsync(0)
      }
      expect(armed).toHaveBeenCalledTimes(1) // 60 messages pulled, each pull with a timeout
      await vi.advanceTimersByTimeAsync(50)
      expect(ids((await next).value as MessageBatch<FakeMessage>)).toEqual(Array.from({ length: 60 }, (_, i) => i))
      await it.return!()
    } finally {
      armed.mockRestore()
      vi.useRealTimers()
    }
  })

  it('next() called again before the first has settled: the calls get the batches in order', async () => {
    const src = new ManualSource<FakeMessage>()
    const it = pipe(src, batch({ size: 2 }))[Symbol.asyncIterator]()
    const both = Promise.all([it.next(), it.next()])
    src.push(fakeMessage(0), fakeMessage(1), fakeMessage(2), fakeMessage(3))
    const [x, y] = await both
    expect([ids(x.value as MessageBatch<FakeMessage>), ids(y.value as MessageBatch<FakeMessage>)]).toEqual([
      [0, 1],
      [2, 3],
    ])
    await it.return!()
  })

  it('emits no empty batches while the source is idle', async () => {
    const src = new ManualSource<FakeMessage>()
    const it = pipe(src, batch({ size: 3, maxWaitMs: 10 }))[Symbol.asyncIterator]()
    const next = it.next()
    expect(await within(next, 60)).toBe('pending')
    src.push(fakeMessage(0))
    expect(ids((await next).value as MessageBatch<FakeMessage>)).toEqual([0])
    await it.return!()
  })

  it('emits a full batch at once, without waiting for maxWaitMs', async () => {
    const src = new ManualSource<FakeMessage>()
    const it = pipe(src, batch({ size: 2, maxWaitMs: 10_000 }))[Symbol.asyncIterator]()
    src.push(fakeMessage(0), fakeMessage(1), fakeMessage(2))
    const r = await within(it.next(), PROMPT_MS)
    expect(r).not.toBe('pending')
    expect(
      ids((r as { value: IteratorResult<MessageBatch<FakeMessage>> }).value.value as MessageBatch<FakeMessage>),
    ).toEqual([0, 1])
    expect(src.nextCalls).toBe(2) // reads only what it needs
    await it.return!()
  })

  it('maxWaitMs: 0 emits what is available without waiting', async () => {
    const src = new ManualSource<FakeMessage>()
    const it = pipe(src, batch({ size: 10, maxWaitMs: 0 }))[Symbol.asyncIterator]()
    src.push(fakeMessage(0), fakeMessage(1))
    const r = await within(it.next(), PROMPT_MS)
    expect(
      ids((r as { value: IteratorResult<MessageBatch<FakeMessage>> }).value.value as MessageBatch<FakeMessage>),
    ).toEqual([0, 1])
    await it.return!()
  })

  it('without maxWaitMs emits only full batches and the remainder at the end', async () => {
    const src = new ManualSource<FakeMessage>()
    const it = pipe(src, batch({ size: 3 }))[Symbol.asyncIterator]()
    const next = it.next()
    src.push(fakeMessage(0))
    expect(await within(next, 50)).toBe('pending')
    src.push(fakeMessage(1))
    src.end()
    expect(ids((await next).value as MessageBatch<FakeMessage>)).toEqual([0, 1])
    expect((await it.next()).done).toBe(true)
  })

  it('a source error after some messages emits them first, then throws', async () => {
    const src = new ManualSource<FakeMessage>()
    const it = pipe(src, batch({ size: 5 }))[Symbol.asyncIterator]()
    src.push(fakeMessage(0))
    const err = new Error('disk gone')
    src.fail(err)
    expect(ids((await it.next()).value as MessageBatch<FakeMessage>)).toEqual([0])
    await expect(it.next()).rejects.toBe(err)
    expect((await it.next()).done).toBe(true)
  })

  it('return() while the source next() is pending resolves at once, calls the source return(), leaves the partial batch unsettled', async () => {
    const src = new ManualSource<FakeMessage>({ hangingReturn: true })
    const it = pipe(src, batch({ size: 5, maxWaitMs: 10_000 }))[Symbol.asyncIterator]()
    const m = fakeMessage(0)
    src.push(m)
    const next = it.next()
    await settle()
    expect(src.pending).toBe(true)
    const t0 = performance.now()
    expect(await within(it.return!(), PROMPT_MS)).toEqual({ value: { done: true, value: undefined } })
    expect(performance.now() - t0).toBeLessThan(PROMPT_MS)
    expect(await within(next, PROMPT_MS)).toEqual({ value: { done: true, value: undefined } })
    expect(src.returnCalls).toBe(1)
    expect(settlements(m)).toBe(0)
  })

  it('an abort throws AbortError promptly even while waiting on the source, and returns the source', async () => {
    const src = new ManualSource<FakeMessage>({ hangingReturn: true })
    const ac = new AbortController()
    const it = pipe(src, batch({ size: 5, signal: ac.signal }))[Symbol.asyncIterator]()
    const next = it.next()
    await settle()
    setTimeout(() => ac.abort(), 10)
    const r = await within(next, PROMPT_MS)
    expect((r as { error: unknown }).error).toBeInstanceOf(AbortError)
    expect(src.returnCalls).toBe(1)
    await expect(
      pipe(src, batch({ size: 1, signal: AbortSignal.abort() }))
        [Symbol.asyncIterator]()
        .next(),
    ).rejects.toBeInstanceOf(AbortError)
  })

  it('works in IxJS: from(source).pipe(batch(options))', async () => {
    const out = await collect(from(fromArray(fakeMessages(5))).pipe(batch<FakeMessage>({ size: 2 })))
    expect(out.map(ids)).toEqual([[0, 1], [2, 3], [4]])
  })

  it('rejects bad options with InvalidArgumentError naming the value', () => {
    expect(() => batch({ size: 0 })).toThrow(InvalidArgumentError)
    expect(() => batch({ size: 0 })).toThrow(/size must be an integer >= 1, got 0/)
    expect(() => batch({ size: 2.5 })).toThrow(/got 2\.5/)
    expect(() => batch({} as { size: number })).toThrow(/got undefined/)
    expect(() => batch({ size: 1, maxWaitMs: -1 })).toThrow(/maxWaitMs must be a number >= 0, got -1/)
    expect(() => batch({ size: 1, maxWaitMs: Number.NaN })).toThrow(/got NaN/)
    expect(() => batch(undefined as unknown as { size: number })).toThrow(InvalidArgumentError)
  })
})
