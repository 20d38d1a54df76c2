import { Observable, firstValueFrom, from, lastValueFrom, observable, take, toArray } from 'rxjs'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { AbortError, ClosedError, MessageStream, open, type Message, type Twain } from '../../../src/index.js'
import { collect, makeTmp, rmTmp, watcherAndTimerCount } from '../../unit/helpers.js'
import { PROMPT_MS, sleep, until } from '../../helpers/wait.js'

const interopKey = observable as unknown as string

describe('MessageStream teardown (src/stream/message-stream.ts)', () => {
  let dir: string
  let twain: Twain
  let baseline: { watchers: number; timers: number }

  /** Resources are back to what they were before the test's tail started. */
  const released = () => {
    const now = watcherAndTimerCount()
    return now.watchers <= baseline.watchers && now.timers <= baseline.timers
  }
  const expectReleased = async () =>
    until(
      released,
      1000,
      `watchers/timers back to ${JSON.stringify(baseline)} (now ${JSON.stringify(watcherAndTimerCount())})`,
    )
  /** The tail waits on a watcher (it is blocked in a read). */
  const held = async () =>
    until(
      () => watcherAndTimerCount().watchers > baseline.watchers,
      1000,
      `a watcher beyond ${JSON.stringify(baseline)}`,
    )

  beforeEach(async () => {
    dir = makeTmp()
    twain = await open(dir)
    await twain.createTopic('s', { partitions: 2 })
    await twain.producer('s').sendBatch([0, 1, 2, 3, 4].map((i) => ({ key: i, value: `m${i}`, partition: 0 })))
    baseline = watcherAndTimerCount()
  })
  afterEach(async () => {
    await twain.close()
    rmTmp(dir)
  })

  it('exposes the RxJS interop method under the key rxjs exports as `observable`, and from() uses it', async () => {
    const stream = twain.history('s')
    expect(stream).toBeInstanceOf(MessageStream)
    expect(typeof (stream as unknown as Record<string, unknown>)[interopKey]).toBe('function')
    const key = ((Symbol as { observable?: symbol }).observable ?? '@@observable') as unknown as string
    expect(key).toBe(interopKey)
    expect(typeof (stream as unknown as Record<string, unknown>)[key]).toBe('function')
    const spy = vi.spyOn(stream, 'asObservable')
    const values = await lastValueFrom(from(stream).pipe(toArray()))
    expect(spy).toHaveBeenCalledTimes(1)
    expect(values.map((m) => m.offset)).toEqual([0, 1, 2, 3, 4])
    expect((stream as unknown as Record<string, () => unknown>)[interopKey]!()).toBeInstanceOf(Observable)
  })

  it('from(tail).pipe(take(3)) completes after 3 messages and releases every watcher and timer', async () => {
    const stream = twain.tail<string>('s', { from: 'start' })
    const sub = firstValueFrom(from(stream).pipe(take(3), toArray()))
    const got = await sub
    expect(got.map((m: Message<string>) => m.value)).toEqual(['m0', 'm1', 'm2'])
    await expectReleased()
    const t0 = Date.now()
    await twain.close()
    expect(Date.now() - t0).toBeLessThan(PROMPT_MS)
  })

  it('take(3) on a tail that must wait for live messages completes and releases', async () => {
    const done = lastValueFrom(from(twain.tail<string>('s', { partitions: [1] })).pipe(take(3), toArray()))
    await held()
    const p = twain.producer('s')
    for (let i = 0; i < 5; i++) await p.send(i, `live${i}`, { partition: 1 })
    expect((await done).map((m) => m.value)).toEqual(['live0', 'live1', 'live2'])
    await expectReleased()
  })

  it('breaking out of for await on a tail that was waiting ends the loop and releases', async () => {
    const seen: string[] = []
    const loop = (async () => {
      for await (const m of twain.tail<string>('s')) {
        seen.push(m.value)
        break
      }
      return 'ended'
    })()
    await held()
    await twain.producer('s').send(1, 'wake', { partition: 1 })
    expect(await loop).toBe('ended')
    expect(seen).toEqual(['wake'])
    await expectReleased()
  })

  it('iterator.return() while a next() is pending resolves that next with done:true at once and releases', async () => {
    const it = twain.tail('s')[Symbol.asyncIterator]()
    const pending = it.next()
    await held()
    const t0 = Date.now()
    const ret = await it.return!()
    const r = await pending
    expect(Date.now() - t0).toBeLessThan(PROMPT_MS)
    expect(r.done).toBe(true)
    expect(ret.done).toBe(true)
    expect((await it.next()).done).toBe(true)
    await expectReleased()
  })

  it('aborting the signal while a for await waits throws AbortError (the package class) and releases', async () => {
    const ctrl = new AbortController()
    const loop = (async () => {
      for await (const _m of twain.tail('s', { signal: ctrl.signal })) {
        /* nothing arrives */
      }
    })()
    await held()
    const t0 = Date.now()
    ctrl.abort()
    const err = await loop.then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(Date.now() - t0).toBeLessThan(PROMPT_MS)
    expect(err).toBeInstanceOf(AbortError)
    expect((err as AbortError).code).toBe('ERR_ABORTED')
    await expectReleased()
  })

  it('an abort reason that is not an AbortError becomes the cause of the AbortError', async () => {
    const ctrl = new AbortController()
    const reason = new Error('shutting down')
    const it = twain.tail('s', { signal: ctrl.signal })[Symbol.asyncIterator]()
    const pending = it.next()
    ctrl.abort(reason)
    const err = await pending.then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(err).toBeInstanceOf(AbortError)
    expect((err as Error).cause).toBe(reason)
  })

  it('an already aborted signal ends a tail and a history at once with AbortError', async () => {
    const ctrl = new AbortController()
    ctrl.abort()
    await expect(collect(twain.tail('s', { signal: ctrl.signal, from: 'start' }))).rejects.toBeInstanceOf(AbortError)
    await expect(collect(twain.history('s', { signal: ctrl.signal }))).rejects.toBeInstanceOf(AbortError)
    await expectReleased()
  })

  it('aborting the signal errors an Observable subscription with AbortError and releases', async () => {
    const ctrl = new AbortController()
    const result = new Promise<unknown>((resolve) => {
      from(twain.tail('s', { signal: ctrl.signal })).subscribe({
        next: () => resolve(new Error('unexpected message')),
        error: (e: unknown) => resolve(e),
        complete: () => resolve(new Error('unexpected completion')),
      })
    })
    await held()
    ctrl.abort()
    expect(await result).toBeInstanceOf(AbortError)
    await expectReleased()
  })

  it('unsubscribing from a waiting tail Observable releases at once without error or completion', async () => {
    const events: string[] = []
    const sub = from(twain.tail('s')).subscribe({
      next: () => events.push('next'),
      error: () => events.push('error'),
      complete: () => events.push('complete'),
    })
    await held()
    sub.unsubscribe()
    await expectReleased()
    await twain.producer('s').send(1, 'after unsubscribe', { partition: 0 })
    await sleep(50) // nothing arrives after the unsubscribe within 50 ms
    expect(events).toEqual([])
  })

  it('stream.close() ends a waiting for await quietly and later iterations end at once', async () => {
    const stream = twain.tail('s', { from: 'start' })
    const seen: number[] = []
    const loop = (async () => {
      for await (const m of stream) seen.push(m.offset)
      return 'quiet end'
    })()
    await until(() => seen.length === 5, 2000, 'the 5 retained messages')
    await held()
    await stream.close()
    expect(stream.closed).toBe(true)
    expect(await loop).toBe('quiet end')
    await expectReleased()
    // a new iteration of the closed stream yields nothing, even though messages exist
    expect(await collect(stream)).toEqual([])
    // and an Observable of it completes at once
    expect(await lastValueFrom(from(stream).pipe(toArray()))).toEqual([])
  })

  it('stream.close() completes a waiting Observable subscription', async () => {
    const stream = twain.tail('s')
    const done = lastValueFrom(from(stream).pipe(toArray()))
    await held()
    await stream.close()
    expect(await done).toEqual([])
    await expectReleased()
  })

  it('twain.close() ends waiting iterations quietly and promptly; iterating afterwards throws ClosedError', async () => {
    const stream = twain.tail('s')
    const loop = (async () => {
      for await (const _m of stream) {
        /* waits */
      }
      return 'ended'
    })()
    await held()
    const t0 = Date.now()
    await twain.close()
    expect(await loop).toBe('ended')
    expect(Date.now() - t0).toBeLessThan(PROMPT_MS)
    await expectReleased()
    await expect(collect(stream)).rejects.toBeInstanceOf(ClosedError)
    expect(() => twain.tail('s')).toThrow(ClosedError)
    await expect(twain.close()).resolves.toBeUndefined() // idempotent
  })

  it('several concurrent iterations of one tail stream each get every message and end independently', async () => {
    const stream = twain.tail<string>('s', { from: 'start', partitions: [1] })
    const a = stream[Symbol.asyncIterator]()
    const b = stream[Symbol.asyncIterator]()
    const pa = a.next()
    const pb = b.next()
    await twain.producer('s').send(1, 'both', { partition: 1 })
    expect((await pa).value?.value).toBe('both')
    expect((await pb).value?.value).toBe('both')
    await a.return!()
    expect((await a.next()).done).toBe(true)
    const pb2 = b.next()
    await twain.producer('s').send(1, 'only b', { partition: 1 })
    expect((await pb2).value?.value).toBe('only b')
    await b.return!()
    await expectReleased()
  })

  it("a second iteration of a from-'end' tail stream delivers a message sent after its next() was called", async () => {
    const stream = twain.tail<string>('s', { partitions: [1] })
    const a = stream[Symbol.asyncIterator]()
    const b = stream[Symbol.asyncIterator]()
    const pa = a.next()
    const pb = b.next()
    await twain.producer('s').send(1, 'both', { partition: 1 })
    const timeout = (ms: number) => sleep(ms).then(() => ({ done: false, value: { value: `nothing within ${ms} ms` } }))
    const [ra, rb] = await Promise.all([Promise.race([pa, timeout(2000)]), Promise.race([pb, timeout(2000)])])
    await a.return!()
    await b.return!()
    expect(ra.value?.value).toBe('both')
    expect(rb.value?.value).toBe('both')
  })

  it("two subscriptions of one from-'end' tail Observable both get a message sent right after subscribing", async () => {
    const stream = twain.tail<string>('s', { partitions: [1] })
    const first = firstValueFrom(from(stream))
    const second = firstValueFrom(from(stream))
    await twain.producer('s').send(1, 'hello', { partition: 1 })
    const within = (p: Promise<Message<string>>) =>
      Promise.race([p.then((m) => m.value), sleep(2000).then(() => 'nothing within 2000 ms')])
    expect(await within(first)).toBe('hello')
    expect(await within(second)).toBe('hello')
  })

  it('a history Observable emits every message and completes', async () => {
    const values = await lastValueFrom(twain.history<string>('s').asObservable().pipe(toArray()))
    expect(values.map((m) => m.value)).toEqual(['m0', 'm1', 'm2', 'm3', 'm4'])
  })
})

describe('instanceof (IxJS gives its base class a static Symbol.hasInstance that subclasses inherit)', () => {
  it('a partitioned consumer is a Consumer and not a SharedConsumer; a tail is a MessageStream, not a Consumer; IxJS still sees them as its own', async () => {
    const { Consumer, SharedConsumer } = await import('../../../src/index.js')
    const { AsyncIterableX } = await import('ix/asynciterable/asynciterablex')
    const dir = makeTmp()
    const twain = await open(dir)
    try {
      await twain.createTopic('t')
      const c = twain.consumer('t', { group: 'g' })
      const tail = twain.tail('t')
      expect([c instanceof Consumer, c instanceof SharedConsumer, c instanceof MessageStream]).toEqual([
        true,
        false,
        true,
      ])
      expect([tail instanceof MessageStream, tail instanceof Consumer, {} instanceof MessageStream]).toEqual([
        true,
        false,
        false,
      ])
      expect([c instanceof AsyncIterableX, tail instanceof AsyncIterableX]).toEqual([true, true])
      await c.close()
    } finally {
      await twain.close()
      rmTmp(dir)
    }
  })
})
