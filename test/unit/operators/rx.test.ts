import { Subject, firstValueFrom, from, lastValueFrom, of, take, toArray, type Observable } from 'rxjs'
import { describe, expect, expectTypeOf, it, vi } from 'vitest'
import { AbortError, InvalidArgumentError, type GroupMessage } from '../../../src/index.js'
import * as rx from '../../../src/operators/rx/index.js'
import { ackRx, batchRx, retryRx, type MessageBatch, type RetryResult } from '../../../src/operators/rx/index.js'
import { deferred, fakeMessage, fakeMessages, settle, settlements, type Deferred, type FakeMessage } from './fakes.js'
import { sleep } from '../../helpers/wait.js'

/** Everything an observable emits, and how it ended. */
function record<T>(obs: Observable<T>) {
  const values: T[] = []
  const state: { error?: unknown; complete: boolean } = { complete: false }
  const sub = obs.subscribe({
    next: (v) => values.push(v),
    error: (e: unknown) => (state.error = e),
    complete: () => (state.complete = true),
  })
  return { values, state, sub }
}

function controlledHandler() {
  const calls = new Map<number, Deferred<void>>()
  const started: number[] = []
  let running = 0
  let maxRunning = 0
  return {
    started,
    get maxRunning() {
      return maxRunning
    },
    handler: async (m: FakeMessage) => {
      const d = deferred()
      calls.set(m.id, d)
      started.push(m.id)
      maxRunning = Math.max(maxRunning, ++running)
      try {
        await d.promise
      } finally {
        running--
      }
    },
    finish: async (id: number) => {
      calls.get(id)!.resolve()
      await settle()
    },
    fail: async (id: number, e: unknown) => {
      calls.get(id)!.reject(e)
      await settle()
    },
  }
}

const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length

describe('twainmq/rx exports', () => {
  it('exports ackRx, batchRx, retryRx, filterAckRx, joinTableRx, the aliases ack, batch, retry, filterAck, joinTable, Joined, and pullMap', () => {
    expect(Object.keys(rx).sort()).toEqual([
      'Joined',
      'ack',
      'ackRx',
      'batch',
      'batchRx',
      'filterAck',
      'filterAckRx',
      'joinTable',
      'joinTableRx',
      'pullMap',
      'retry',
      'retryRx',
    ])
    expect(rx.filterAck).toBe(rx.filterAckRx)
    expect(rx.joinTable).toBe(rx.joinTableRx)
    expect(rx.ack).toBe(ackRx)
    expect(rx.batch).toBe(batchRx)
    expect(rx.retry).toBe(retryRx)
  })

  it('is typed as OperatorFunctions over GroupMessage', () => {
    const chain = (src: Observable<GroupMessage<string>>) =>
      src.pipe(
        ackRx((m) => m.value.length),
        batchRx({ size: 2 }),
      )
    expectTypeOf(chain).returns.toEqualTypeOf<Observable<MessageBatch<GroupMessage<string>>>>()
    const r = (src: Observable<GroupMessage<number>>) =>
      src.pipe(retryRx((m, attempt) => m.value * attempt, { attempts: 2 }))
    expectTypeOf(r).returns.toEqualTypeOf<Observable<RetryResult<GroupMessage<number>>>>()
  })
})

describe('ackRx()', () => {
  it('without a handler acks each message as it passes', async () => {
    const msgs = fakeMessages(3)
    const out = await lastValueFrom(from(msgs).pipe(ackRx(), toArray()))
    expect(out.map((m) => m.id)).toEqual([0, 1, 2])
    expect(msgs.map((m) => m.acks)).toEqual([1, 1, 1])
  })

  it('acks after the handler, runs different keys in parallel and one key in order', async () => {
    const src = new Subject<FakeMessage>()
    const h = controlledHandler()
    const msgs = ['a', 'a', 'b', 'c'].map((k, i) => fakeMessage(i, k))
    const r = record(src.pipe(ackRx(h.handler, { concurrency: 2 })))
    for (const m of msgs) src.next(m)
    src.complete()
    await settle()
    expect(h.started).toEqual([0, 2]) // a1 waits behind a0; c waits for a slot
    expect(msgs.map((m) => m.acks)).toEqual([0, 0, 0, 0])
    await h.finish(2)
    expect(h.started).toEqual([0, 2, 3])
    await h.finish(0)
    expect(h.started).toEqual([0, 2, 3, 1])
    await h.finish(3)
    await h.finish(1)
    expect(r.values.map((m) => m.id)).toEqual([2, 0, 3, 1])
    expect(msgs.map((m) => m.acks)).toEqual([1, 1, 1, 1])
    expect(h.maxRunning).toBe(2)
    expect(r.state.complete).toBe(true)
  })

  it('perKey: false runs one key in parallel', async () => {
    const h = controlledHandler()
    const r = record(from(fakeMessages(3, () => 'k')).pipe(ackRx(h.handler, { concurrency: 3, perKey: false })))
    await settle()
    expect(h.started).toEqual([0, 1, 2])
    for (const id of [0, 1, 2]) await h.finish(id)
    expect(r.state.complete).toBe(true)
  })

  it('a failing handler nacks its message; the stream errors after running handlers finish', async () => {
    const h = controlledHandler()
    const msgs = fakeMessages(4)
    const r = record(from(msgs).pipe(ackRx(h.handler, { concurrency: 2 })))
    await settle()
    const boom = new Error('boom')
    await h.fail(0, boom)
    expect(msgs[0]!.nacks).toBe(1)
    expect(r.state.error).toBeUndefined() // message 1 still running
    await h.finish(1)
    expect(r.values).toEqual([msgs[1]])
    expect(r.state.error).toBe(boom)
    expect(h.started).toEqual([0, 1])
    expect(settlements(msgs[2]!) + settlements(msgs[3]!)).toBe(0)
  })

  it('take(n) unsubscribes: handlers still running finish without ack or nack', async () => {
    const h = controlledHandler()
    const msgs = fakeMessages(3)
    const src = new Subject<FakeMessage>()
    const first = firstValueFrom(src.pipe(ackRx(h.handler, { concurrency: 3 })))
    for (const m of msgs) src.next(m)
    await settle()
    await h.finish(1)
    expect(await first).toBe(msgs[1])
    expect(src.observed).toBe(false) // the source was unsubscribed
    await h.finish(0)
    await h.finish(2)
    expect(msgs.map(settlements)).toEqual([0, 1, 0])
  })

  it('the signal errors it with AbortError', async () => {
    const ac = new AbortController()
    const src = new Subject<FakeMessage>()
    const r = record(src.pipe(ackRx(async () => undefined, { signal: ac.signal })))
    ac.abort()
    expect(r.state.error).toBeInstanceOf(AbortError)
    expect(src.observed).toBe(false)
    const pre = record(of(fakeMessage(0)).pipe(ackRx({ signal: AbortSignal.abort() })))
    expect(pre.state.error).toBeInstanceOf(AbortError)
  })

  it('validates its options like ack()', () => {
    expect(() => ackRx(undefined, { concurrency: -1 })).toThrow(InvalidArgumentError)
    expect(() => ackRx({ concurrency: -1 })).toThrow(/ackRx\(\): concurrency must be an integer >= 1, got -1/)
  })
})

describe('batchRx()', () => {
  it('emits full batches at once and the remainder on complete, in order', async () => {
    const out = await lastValueFrom(from(fakeMessages(7)).pipe(batchRx({ size: 3 }), toArray()))
    expect(out.map((b) => b.map((m) => m.id))).toEqual([[0, 1, 2], [3, 4, 5], [6]])
    expect(Object.isFrozen(out[0])).toBe(true)
    out[2]!.ack()
    expect(out[2]![0]!.acks).toBe(1)
  })

  it('emits a partial batch maxWaitMs after its first message', async () => {
    const src = new Subject<FakeMessage>()
    const r = record(src.pipe(batchRx({ size: 10, maxWaitMs: 30 })))
    const t0 = performance.now()
    src.next(fakeMessage(0))
    src.next(fakeMessage(1))
    await sleep(10) // time is the subject: no batch before maxWaitMs (30 ms)
    expect(r.values).toEqual([])
    while (r.values.length === 0 && performance.now() - t0 < 1000) await sleep(2)
    expect(performance.now() - t0).toBeGreaterThanOrEqual(25)
    expect(r.values.map((b) => b.map((m) => m.id))).toEqual([[0, 1]])
    await sleep(50)
    expect(r.values).toHaveLength(1) // no empty batches while idle
    r.sub.unsubscribe()
  })

  it('unsubscribing clears the pending timer and emits nothing more', async () => {
    const src = new Subject<FakeMessage>()
    const before = timers()
    const r = record(src.pipe(batchRx({ size: 10, maxWaitMs: 30 })))
    src.next(fakeMessage(0))
    expect(timers()).toBe(before + 1)
    r.sub.unsubscribe()
    expect(timers()).toBe(before)
    await sleep(50) // past maxWaitMs: nothing is emitted after the unsubscribe
    expect(r.values).toEqual([])
  })

  it('on a source error emits the partial batch, then the error', () => {
    const src = new Subject<FakeMessage>()
    const r = record(src.pipe(batchRx({ size: 10 })))
    src.next(fakeMessage(0))
    const err = new Error('x')
    src.error(err)
    expect(r.values.map((b) => b.length)).toEqual([1])
    expect(r.state.error).toBe(err)
  })

  it('the signal errors it with AbortError and clears the timer', () => {
    const ac = new AbortController()
    const src = new Subject<FakeMessage>()
    const before = timers()
    const r = record(src.pipe(batchRx({ size: 10, maxWaitMs: 1000, signal: ac.signal })))
    src.next(fakeMessage(0))
    ac.abort()
    expect(r.state.error).toBeInstanceOf(AbortError)
    expect(timers()).toBe(before)
  })

  it('validates its options like batch()', () => {
    expect(() => batchRx({ size: 0 })).toThrow(/batchRx\(\): size must be an integer >= 1, got 0/)
    expect(() => batchRx({ size: 1, maxWaitMs: -5 })).toThrow(InvalidArgumentError)
  })
})

describe('retryRx()', () => {
  const fast = { initialMs: 1, maxMs: 1, jitter: 0 }

  it('retries until success and acks; gives up after `attempts` with term(reason)', async () => {
    const calls = new Map<number, number>()
    const handler = (m: FakeMessage, attempt: number) => {
      calls.set(m.id, attempt)
      if (m.id === 1 || attempt < 3) throw new Error(`fail ${m.id}`)
    }
    const msgs = fakeMessages(2)
    const out = await lastValueFrom(from(msgs).pipe(retryRx(handler, { attempts: 4, backoff: fast }), toArray()))
    expect(out.map((r) => [r.message.id, r.ok, r.attempts])).toEqual([
      [0, true, 3],
      [1, false, 4],
    ])
    expect(calls.get(1)).toBe(4)
    expect([msgs[0]!.acks, msgs[0]!.terms]).toEqual([1, 0])
    expect([msgs[1]!.acks, msgs[1]!.terms, msgs[1]!.termReasons]).toEqual([0, 1, ['fail 1']])
  })

  it('deadLetter: false nacks; retryIf false gives up after one call', async () => {
    const m1 = fakeMessage(0)
    await lastValueFrom(
      of(m1).pipe(
        retryRx(() => Promise.reject(new Error('x')), { attempts: 2, backoff: fast, deadLetter: false }),
        toArray(),
      ),
    )
    expect([m1.nacks, m1.terms]).toEqual([1, 0])
    let calls = 0
    const m2 = fakeMessage(1)
    const [r] = await lastValueFrom(
      of(m2).pipe(
        retryRx(
          () => {
            calls++
            throw new RangeError('bad')
          },
          { attempts: 5, retryIf: (e) => !(e instanceof RangeError) },
        ),
        toArray(),
      ),
    )
    expect(calls).toBe(1)
    expect(r).toMatchObject({ ok: false, attempts: 1 })
    expect(m2.terms).toBe(1)
  })

  it('waits the backoff between attempts', async () => {
    // Time is the subject: on a fake clock (RxJS schedules with setInterval and Date.now), so the
    // waits are exact and a loaded machine cannot stretch them.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date', 'performance'] })
    try {
      const times: number[] = []
      const done = lastValueFrom(
        of(fakeMessage(0)).pipe(
          retryRx(
            () => {
              times.push(performance.now())
              throw new Error('x')
            },
            { attempts: 3, backoff: { initialMs: 30, multiplier: 2, jitter: 0 } },
          ),
        ),
      )
      await vi.advanceTimersByTimeAsync(29)
      expect(times).toHaveLength(1)
      await vi.advanceTimersByTimeAsync(1)
      expect(times).toHaveLength(2) // 30 ms after the first attempt
      await vi.advanceTimersByTimeAsync(59)
      expect(times).toHaveLength(2)
      await vi.advanceTimersByTimeAsync(1)
      expect(times).toHaveLength(3) // 60 ms after the second
      await done
      expect([times[1]! - times[0]!, times[2]! - times[1]!]).toEqual([30, 60])
    } finally {
      vi.useRealTimers()
    }
  })

  it('take(1) unsubscribes during a backoff wait: the timer is cleared, no more calls, message unsettled', async () => {
    // Fake timers: the backoff cannot run out while the test looks, however loaded the machine.
    vi.useFakeTimers()
    try {
      let calls = 0
      const m = fakeMessage(1)
      const src = new Subject<FakeMessage>()
      const results: Array<RetryResult<FakeMessage>> = []
      const sub = src
        .pipe(
          retryRx(
            (msg) => {
              calls++
              if (msg.id === 1) throw new Error('x')
            },
            { attempts: 5, backoff: { initialMs: 40, jitter: 0 } },
          ),
          take(1),
        )
        .subscribe((r) => results.push(r))
      src.next(m)
      await vi.advanceTimersByTimeAsync(0)
      expect(calls).toBe(1)
      const before = vi.getTimerCount()
      sub.unsubscribe()
      expect(vi.getTimerCount()).toBe(before - 1)
      await vi.advanceTimersByTimeAsync(80) // past the backoff: no retry after the unsubscribe
      expect(calls).toBe(1)
      expect(settlements(m)).toBe(0)
      expect(results).toEqual([])
    } finally {
      vi.useRealTimers()
    }
  })

  it('the signal errors it with AbortError', async () => {
    const ac = new AbortController()
    const gate = deferred()
    const m = fakeMessage(0)
    const r = record(of(m).pipe(retryRx(() => gate.promise, { attempts: 1, signal: ac.signal })))
    ac.abort()
    expect(r.state.error).toBeInstanceOf(AbortError)
    gate.resolve()
    await settle()
    expect(settlements(m)).toBe(0)
  })

  it('validates its options like retry()', () => {
    expect(() => retryRx(() => undefined, { attempts: 0 })).toThrow(
      /retryRx\(\): attempts must be an integer >= 1, got 0/,
    )
  })
})
