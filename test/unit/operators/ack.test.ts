import { getEventListeners } from 'node:events'
import { type AsyncIterableX, from } from 'ix/asynciterable'
import { map } from 'ix/asynciterable/operators'
import { describe, expect, expectTypeOf, it } from 'vitest'
import { AbortError, InvalidArgumentError, type GroupMessage } from '../../../src/index.js'
import { ack, pipe } from '../../../src/operators/index.js'
import {
  deferred,
  fakeMessage,
  fakeMessages,
  fromArray,
  ManualSource,
  settle,
  settlements,
  within,
  type Deferred,
  type FakeMessage,
} from './fakes.js'
import { PROMPT_MS, sleep } from '../../helpers/wait.js'

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = []
  for await (const v of it) out.push(v)
  return out
}

/** A handler whose calls the test finishes one by one, recording which are running. */
function controlledHandler() {
  const calls = new Map<number, Deferred<void>>()
  const started: number[] = []
  const running = new Set<number>()
  let maxRunning = 0
  const handler = async (m: FakeMessage): Promise<void> => {
    const d = deferred()
    calls.set(m.id, d)
    started.push(m.id)
    running.add(m.id)
    maxRunning = Math.max(maxRunning, running.size)
    try {
      await d.promise
    } finally {
      running.delete(m.id)
    }
  }
  return {
    handler,
    started,
    running,
    get maxRunning() {
      return maxRunning
    },
    finish: async (id: number) => {
      const d = calls.get(id)
      if (!d) throw new Error(`handler of message ${id} has not started (started: ${started.join(',')})`)
      d.resolve()
      await settle()
    },
    fail: async (id: number, error: unknown) => {
      const d = calls.get(id)
      if (!d) throw new Error(`handler of message ${id} has not started`)
      d.reject(error)
      await settle()
    },
  }
}

describe('ack()', () => {
  it('without a handler acks every message once and emits them in order', async () => {
    const msgs = fakeMessages(5)
    const out = await collect(pipe(fromArray(msgs), ack()))
    expect(out.map((m) => m.id)).toEqual([0, 1, 2, 3, 4])
    for (const m of msgs) expect([m.acks, m.nacks, m.terms]).toEqual([1, 0, 0])
  })

  it('runs the handler before acking: a message is acked only after its handler resolved', async () => {
    const m = fakeMessage(1, 'k')
    const h = controlledHandler()
    const it = pipe(fromArray([m]), ack(h.handler))[Symbol.asyncIterator]()
    const next = it.next()
    await settle()
    expect(h.started).toEqual([1])
    expect(m.acks).toBe(0)
    await h.finish(1)
    expect((await next).value).toBe(m)
    expect(m.acks).toBe(1)
    expect((await it.next()).done).toBe(true)
  })

  it('with concurrency 1 runs one handler at a time, in source order, without reading ahead', async () => {
    const src = new ManualSource<FakeMessage>()
    const msgs = fakeMessages(3, () => undefined)
    src.push(...msgs)
    src.end()
    const h = controlledHandler()
    const it = pipe(src, ack(h.handler))[Symbol.asyncIterator]()
    const first = it.next()
    await settle()
    expect(h.started).toEqual([0])
    expect(src.nextCalls).toBe(1) // nothing read ahead while message 0 is handled
    await h.finish(0)
    expect((await first).value).toBe(msgs[0])
    await settle()
    expect(src.nextCalls).toBe(1) // nobody asked for more
    const second = it.next()
    await settle()
    expect(h.started).toEqual([0, 1])
    await h.finish(1)
    expect((await second).value).toBe(msgs[1])
    const third = it.next()
    await settle()
    await h.finish(2)
    expect((await third).value).toBe(msgs[2])
    expect((await it.next()).done).toBe(true)
    expect(h.maxRunning).toBe(1)
  })

  it('with concurrency 3 runs up to 3 handlers of different keys at once, never more', async () => {
    const msgs = fakeMessages(10) // keys 0..9, all different
    const h = controlledHandler()
    const it = pipe(fromArray(msgs), ack(h.handler, { concurrency: 3 }))[Symbol.asyncIterator]()
    const got: number[] = []
    const pump = (async () => {
      for (;;) {
        const r = await it.next()
        if (r.done) return
        got.push(r.value.id)
      }
    })()
    await settle()
    expect(h.started).toEqual([0, 1, 2])
    expect(h.running.size).toBe(3)
    for (let i = 0; i < 10; i++) await h.finish(i)
    await pump
    expect(got).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    expect(h.maxRunning).toBe(3)
    for (const m of msgs) expect(m.acks).toBe(1)
  })

  it("keeps one key in order: a key's next message starts only after the previous one finished", async () => {
    // keys: a a b a b
    const msgs = ['a', 'a', 'b', 'a', 'b'].map((k, i) => fakeMessage(i, k))
    const h = controlledHandler()
    const out: number[] = []
    const done = (async () => {
      for await (const m of pipe(fromArray(msgs), ack(h.handler, { concurrency: 4 }))) out.push(m.id)
    })()
    await settle()
    expect(h.started).toEqual([0, 2]) // a0 and b2; a1 waits behind a0, b4 behind b2
    await h.finish(2) // b2 finishes first
    expect(out).toEqual([2])
    expect(h.started).toEqual([0, 2, 4])
    expect(h.running.has(1)).toBe(false)
    await h.finish(0)
    expect(h.started).toEqual([0, 2, 4, 1])
    await h.finish(1)
    expect(h.started).toEqual([0, 2, 4, 1, 3])
    await h.finish(4)
    await h.finish(3)
    await done
    expect(out).toEqual([2, 0, 1, 4, 3]) // completion order; per key: a 0,1,3 and b 2,4 in source order
    for (const m of msgs) expect(m.acks).toBe(1)
  })

  it('compares keys by value, bigint-safe: equal bigints share a lane, different ones run in parallel', async () => {
    const big = (1n << 64n) - 1n
    const msgs = [
      fakeMessage(0, big),
      fakeMessage(1, (1n << 64n) - 1n),
      fakeMessage(2, big - 1n),
      fakeMessage(3, 5),
      fakeMessage(4, 5n),
    ]
    const h = controlledHandler()
    const done = collect(pipe(fromArray(msgs), ack(h.handler, { concurrency: 5 })))
    await settle()
    expect(h.started).toEqual([0, 2, 3]) // 1 has the same key as 0; 4 (5n) the same as 3 (5)
    for (const id of [0, 2, 3, 1, 4]) await h.finish(id)
    expect((await done).map((m) => m.id).sort()).toEqual([0, 1, 2, 3, 4])
  })

  it('perKey: false runs messages of one key in parallel', async () => {
    const msgs = fakeMessages(3, () => 'same')
    const h = controlledHandler()
    const done = collect(pipe(fromArray(msgs), ack(h.handler, { concurrency: 3, perKey: false })))
    await settle()
    expect(h.started).toEqual([0, 1, 2])
    await h.finish(2)
    await h.finish(0)
    await h.finish(1)
    expect((await done).map((m) => m.id)).toEqual([2, 0, 1])
  })

  it('holds at most 2 × concurrency − 1 messages read from the source and not emitted', async () => {
    const src = new ManualSource<FakeMessage>()
    src.push(...fakeMessages(20, () => 'hot')) // one key: only one handler can run
    const h = controlledHandler()
    const it = pipe(src, ack(h.handler, { concurrency: 3 }))[Symbol.asyncIterator]()
    const first = it.next()
    await settle()
    expect(src.nextCalls).toBe(5)
    expect(h.running.size).toBe(1)
    await h.finish(0)
    expect((await first).value?.id).toBe(0)
    await settle()
    expect(src.nextCalls).toBe(5) // no read while nobody waits
    const second = it.next()
    await settle()
    expect(src.nextCalls).toBe(6) // one emitted, one more read
    await h.finish(1)
    expect((await second).value?.id).toBe(1)
    await it.return?.()
  })

  it('when a handler throws: nacks that message, lets running handlers finish, then throws the error', async () => {
    const src = new ManualSource<FakeMessage>()
    const msgs = [fakeMessage(0, 'a'), fakeMessage(1, 'b'), fakeMessage(2, 'a'), fakeMessage(3, 'c')]
    src.push(...msgs)
    const h = controlledHandler()
    const it = pipe(src, ack(h.handler, { concurrency: 2 }))[Symbol.asyncIterator]()
    const first = it.next()
    await settle()
    expect(h.started).toEqual([0, 1])
    const boom = new Error('boom')
    await h.fail(0, boom)
    expect(msgs[0]!.nacks).toBe(1)
    expect(msgs[0]!.acks).toBe(0)
    expect(await within(first, 20)).toBe('pending') // waits for message 1's handler
    await h.finish(1)
    expect((await first).value).toBe(msgs[1]) // the running one's success is still emitted
    expect(msgs[1]!.acks).toBe(1)
    await expect(it.next()).rejects.toBe(boom)
    expect(h.started).toEqual([0, 1]) // message 2 (behind a) and 3 never started
    expect(settlements(msgs[2]!)).toBe(0)
    expect(settlements(msgs[3]!)).toBe(0)
    expect(src.returnCalls).toBe(1)
    expect((await it.next()).done).toBe(true)
  })

  it('a synchronous throw in the handler is a failure like a rejection', async () => {
    const m = fakeMessage(0)
    const err = new TypeError('sync')
    await expect(
      collect(
        pipe(
          fromArray([m]),
          ack(() => {
            throw err
          }),
        ),
      ),
    ).rejects.toBe(err)
    expect([m.acks, m.nacks]).toEqual([0, 1])
  })

  it('a source error ends the stream after the running handlers finish', async () => {
    const src = new ManualSource<FakeMessage>()
    const m = fakeMessage(0, 'a')
    src.push(m)
    const h = controlledHandler()
    const it = pipe(src, ack(h.handler, { concurrency: 2 }))[Symbol.asyncIterator]()
    const first = it.next()
    await settle()
    const err = new Error('source broke')
    src.fail(err)
    await settle()
    await h.finish(0)
    expect((await first).value).toBe(m)
    await expect(it.next()).rejects.toBe(err)
    expect(src.returnCalls).toBe(0) // a failed iterator is not returned
  })

  it('return() while the source next() is pending resolves at once, calls the source return() without awaiting it, and leaves a late message un-acked', async () => {
    const src = new ManualSource<FakeMessage>({ hangingReturn: true })
    const it = pipe(src, ack())[Symbol.asyncIterator]()
    const pendingNext = it.next()
    await settle()
    expect(src.pending).toBe(true)
    const t0 = performance.now()
    const r = await within(it.return!(), PROMPT_MS)
    expect(r).toEqual({ value: { done: true, value: undefined } })
    expect(performance.now() - t0).toBeLessThan(PROMPT_MS)
    expect(src.returnCalls).toBe(1)
    expect(await within(pendingNext, PROMPT_MS)).toEqual({ value: { done: true, value: undefined } })
    const late = fakeMessage(9)
    src.push(late)
    await settle()
    expect(settlements(late)).toBe(0)
    expect((await it.next()).done).toBe(true)
  })

  it('break with concurrency > 1: messages handled but not emitted stay un-acked', async () => {
    const msgs = fakeMessages(4)
    const h = controlledHandler()
    const src = new ManualSource<FakeMessage>({ hangingReturn: true })
    src.push(...msgs)
    const it = pipe(src, ack(h.handler, { concurrency: 4 }))[Symbol.asyncIterator]()
    const first = it.next()
    await settle()
    expect(h.started).toEqual([0, 1, 2, 3])
    await h.finish(1)
    expect((await first).value).toBe(msgs[1])
    await h.finish(2) // handled while nobody waits: not emitted yet
    await it.return!()
    await h.finish(0)
    await h.finish(3)
    expect(msgs.map((m) => m.acks)).toEqual([0, 1, 0, 0])
    expect(msgs.map((m) => m.nacks)).toEqual([0, 0, 0, 0])
    expect(src.returnCalls).toBe(1)
  })

  it('an abort while waiting on the source throws AbortError promptly and returns the source', async () => {
    const src = new ManualSource<FakeMessage>({ hangingReturn: true })
    const ac = new AbortController()
    const it = pipe(src, ack({ signal: ac.signal }))[Symbol.asyncIterator]()
    const next = it.next()
    await settle()
    const t0 = performance.now()
    ac.abort()
    const r = await within(next, PROMPT_MS)
    expect(performance.now() - t0).toBeLessThan(PROMPT_MS)
    expect(r).not.toBe('pending')
    expect((r as { error: unknown }).error).toBeInstanceOf(AbortError)
    expect(src.returnCalls).toBe(1)
    expect((await it.next()).done).toBe(true)
  })

  it('an abort while a handler runs throws AbortError and leaves that message unsettled', async () => {
    const ac = new AbortController()
    const m = fakeMessage(0)
    const h = controlledHandler()
    const it = pipe(fromArray([m]), ack(h.handler, { signal: ac.signal }))[Symbol.asyncIterator]()
    const next = it.next()
    await settle()
    ac.abort(new Error('shutdown'))
    await expect(next).rejects.toBeInstanceOf(AbortError)
    await h.finish(0)
    expect(settlements(m)).toBe(0)
  })

  it('an already aborted signal throws AbortError on the first next() without reading the source', async () => {
    const src = new ManualSource<FakeMessage>()
    const it = pipe(src, ack(undefined, { signal: AbortSignal.abort() }))[Symbol.asyncIterator]()
    await expect(it.next()).rejects.toBeInstanceOf(AbortError)
    expect(src.nextCalls).toBe(0)
  })

  it('works in IxJS: from(source).pipe(ack(handler)) and chained with ix operators', async () => {
    const msgs = fakeMessages(4)
    const seen: number[] = []
    const out = await collect(
      from(fromArray(msgs)).pipe(
        ack(async (m: FakeMessage) => {
          seen.push(m.id)
        }),
        map((m: FakeMessage) => m.id * 10),
      ),
    )
    expect(out).toEqual([0, 10, 20, 30])
    expect(seen).toEqual([0, 1, 2, 3])
    expect(msgs.every((m) => m.acks === 1)).toBe(true)
    // and IxJS's from() over an ack output, broken out of early
    const first: FakeMessage[] = []
    for await (const m of from(pipe(fromArray(fakeMessages(5)), ack()))) {
      first.push(m)
      if (first.length === 2) break
    }
    expect(first.map((m) => m.id)).toEqual([0, 1])
  })

  it('honours the signal IxJS passes to [Symbol.asyncIterator](signal), e.g. from forEach(fn, thisArg, signal)', async () => {
    const src = new ManualSource<FakeMessage>({ hangingReturn: true })
    src.push(fakeMessage(0))
    const ac = new AbortController()
    const seen: number[] = []
    const done = from(src)
      .pipe(ack<FakeMessage>())
      .forEach((m) => void seen.push(m.id), undefined, ac.signal)
    await settle()
    ac.abort()
    const r = await within(done, PROMPT_MS)
    expect((r as { error: unknown }).error).toBeInstanceOf(AbortError)
    expect(seen).toEqual([0])
  })

  it('is cold: each iteration reads the source anew', async () => {
    const op = pipe({ [Symbol.asyncIterator]: () => fromArray(fakeMessages(2)) }, ack())
    expect((await collect(op)).length).toBe(2)
    expect((await collect(op)).length).toBe(2)
  })

  it('rejects bad options with InvalidArgumentError naming the value', () => {
    expect(() => ack(undefined, { concurrency: 0 })).toThrow(InvalidArgumentError)
    expect(() => ack(undefined, { concurrency: 0 })).toThrow(/concurrency.*got 0/)
    expect(() => ack({ concurrency: 1.5 })).toThrow(/got 1\.5/)
    expect(() => ack({ concurrency: Infinity })).toThrow(/got Infinity/)
    expect(() => ack({ perKey: 'yes' as unknown as boolean })).toThrow(/perKey must be a boolean, got "yes"/)
    expect(() => ack({ signal: {} as AbortSignal })).toThrow(InvalidArgumentError)
    expect(() => ack(42 as unknown as undefined, {})).toThrow(InvalidArgumentError)
    expect(() => ack()(42 as unknown as AsyncIterable<FakeMessage>)).toThrow(/AsyncIterable, got number/)
  })

  it('is typed for GroupMessage sources', () => {
    const typed = (src: AsyncIterable<GroupMessage<{ id: string }>>) =>
      pipe(
        src,
        ack(async (m) => m.value.id),
      )
    expectTypeOf(typed).returns.toEqualTypeOf<AsyncIterable<GroupMessage<{ id: string }>>>()
    const viaIx = (src: AsyncIterable<GroupMessage<string>>) => from(src).pipe(ack((m) => m.value.length))
    expectTypeOf(viaIx).returns.toEqualTypeOf<AsyncIterableX<GroupMessage<string>>>()
    const viaIx2 = (src: AsyncIterable<GroupMessage<string>>) =>
      from(src).pipe(
        ack(),
        map((m) => m.value.length),
      )
    expectTypeOf(viaIx2).returns.toEqualTypeOf<AsyncIterableX<number>>()
  })

  it('removes its abort listener when the iteration ends, and adds only one per iteration', async () => {
    const ac = new AbortController()
    let count = 0
    let maxListeners = 0
    const n = 300
    for await (const m of pipe(
      fromArray(fakeMessages(n, (i) => i % 7)),
      ack(async () => sleep(0), { concurrency: 4, signal: ac.signal }),
    )) {
      count += m.acks
      maxListeners = Math.max(maxListeners, getEventListeners(ac.signal, 'abort').length)
    }
    expect(count).toBe(n)
    expect(maxListeners).toBe(1)
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0)
  })
})
