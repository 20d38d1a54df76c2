import { from } from 'ix/asynciterable'
import { describe, expect, it, vi } from 'vitest'
import { AbortError, InvalidArgumentError } from '../../../src/index.js'
import { backoffDelay, resolveBackoff } from '../../../src/operators/backoff.js'
import { pipe, retry, type RetryResult } from '../../../src/operators/index.js'
import {
  deferred,
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

const fast = { initialMs: 1, maxMs: 1, jitter: 0 }

/** A handler that fails `failures` times per message (with `error`), then succeeds. */
function flaky(failures: number, error: unknown = new Error('flaky')) {
  const calls = new Map<number, number[]>()
  const handler = (m: FakeMessage, attempt: number) => {
    calls.set(m.id, [...(calls.get(m.id) ?? []), attempt])
    if (attempt <= failures) throw error
  }
  return { handler, calls }
}

describe('retry()', () => {
  it('next() called again before the first has settled: the handler still takes one message at a time, in order', async () => {
    const running: number[] = []
    let overlap = false
    const gates = [deferred<void>(), deferred<void>()]
    const it = pipe(
      fromArray(fakeMessages(2)),
      retry(
        async (m: FakeMessage) => {
          if (running.length > 0) overlap = true
          running.push(m.id)
          await (gates[m.id] as { promise: Promise<void> }).promise
          running.pop()
        },
        { attempts: 1 },
      ),
    )[Symbol.asyncIterator]()
    const both = Promise.all([it.next(), it.next()])
    await settle()
    expect(running).toEqual([0]) // the second call waits for the first
    gates[0]?.resolve()
    await settle()
    expect(running).toEqual([1])
    gates[1]?.resolve()
    const [x, y] = await both
    expect([x.value?.message.id, y.value?.message.id]).toEqual([0, 1])
    expect(overlap).toBe(false)
  })

  it('success on the first attempt: one call, ack, { ok: true, attempts: 1 }', async () => {
    const m = fakeMessage(0)
    const f = flaky(0)
    const [r] = await collect(pipe(fromArray([m]), retry(f.handler, { attempts: 3 })))
    expect(r).toEqual({ message: m, ok: true, attempts: 1 })
    expect([m.acks, m.nacks, m.terms]).toEqual([1, 0, 0])
    expect(f.calls.get(0)).toEqual([1])
  })

  it('retries until success: two failures then success is three calls, acked once', async () => {
    const m = fakeMessage(0)
    const f = flaky(2)
    const [r] = await collect(pipe(fromArray([m]), retry(f.handler, { attempts: 5, backoff: fast })))
    expect(r).toMatchObject({ ok: true, attempts: 3 })
    expect(f.calls.get(0)).toEqual([1, 2, 3])
    expect([m.acks, m.nacks, m.terms]).toEqual([1, 0, 0])
  })

  it('gives up after `attempts` calls: term(reason = the error message), { ok: false, error }', async () => {
    const m = fakeMessage(0)
    const err = new Error('downstream 503')
    const f = flaky(Infinity, err)
    const [r] = await collect(pipe(fromArray([m]), retry(f.handler, { attempts: 3, backoff: fast })))
    expect(r).toEqual({ message: m, ok: false, attempts: 3, error: err })
    expect(f.calls.get(0)).toEqual([1, 2, 3])
    expect([m.acks, m.nacks, m.terms]).toEqual([0, 0, 1])
    expect(m.termReasons).toEqual(['downstream 503'])
  })

  it('deadLetter: false nacks instead of term', async () => {
    const m = fakeMessage(0)
    const [r] = await collect(
      pipe(fromArray([m]), retry(flaky(Infinity).handler, { attempts: 2, backoff: fast, deadLetter: false })),
    )
    expect(r).toMatchObject({ ok: false, attempts: 2 })
    expect([m.acks, m.nacks, m.terms]).toEqual([0, 1, 0])
  })

  it('retryIf returning false gives up at once, after one call', async () => {
    const m = fakeMessage(0)
    const err = new TypeError('invalid payload')
    const f = flaky(Infinity, err)
    const seen: unknown[] = []
    const [r] = await collect(
      pipe(
        fromArray([m]),
        retry(f.handler, {
          attempts: 5,
          backoff: { initialMs: 10_000 },
          retryIf: (e) => {
            seen.push(e)
            return !(e instanceof TypeError)
          },
        }),
      ),
    )
    expect(r).toMatchObject({ ok: false, attempts: 1, error: err })
    expect(f.calls.get(0)).toEqual([1])
    expect(seen).toEqual([err])
    expect(m.termReasons).toEqual(['invalid payload'])
  })

  it('does not ask retryIf after the last attempt', async () => {
    let asked = 0
    await collect(
      pipe(
        fromArray([fakeMessage(0)]),
        retry(flaky(Infinity).handler, { attempts: 2, backoff: fast, retryIf: () => (asked++, true) }),
      ),
    )
    expect(asked).toBe(1)
  })

  it('a retryIf that throws nacks the message and ends the stream with its error', async () => {
    const m = fakeMessage(0)
    const bug = new Error('bug in retryIf')
    const it = pipe(
      fromArray([m, fakeMessage(1)]),
      retry(flaky(Infinity).handler, {
        attempts: 3,
        retryIf: () => {
          throw bug
        },
      }),
    )
    await expect(collect(it)).rejects.toBe(bug)
    expect([m.acks, m.nacks, m.terms]).toEqual([0, 1, 0])
  })

  it('waits the backoff between attempts: initialMs, then × multiplier', async () => {
    // Fake timers: the waits are checked to the millisecond, and no load can stretch them.
    vi.useFakeTimers()
    try {
      let calls = 0
      const handler = () => {
        calls++
        throw new Error('no')
      }
      const done = collect(
        pipe(
          fromArray([fakeMessage(0)]),
          retry(handler, { attempts: 3, backoff: { initialMs: 30, multiplier: 2, jitter: 0 } }),
        ),
      )
      const after = async (ms: number): Promise<number> => {
        await vi.advanceTimersByTimeAsync(ms)
        return calls
      }
      expect(await after(0)).toBe(1)
      expect(await after(29)).toBe(1)
      expect(await after(1)).toBe(2) // 30 ms after the first
      expect(await after(59)).toBe(2)
      expect(await after(1)).toBe(3) // 60 ms after the second
      await done
    } finally {
      vi.useRealTimers()
    }
  })

  it('processes one message at a time, in order', async () => {
    const gate = deferred()
    const log: string[] = []
    const handler = async (m: FakeMessage) => {
      log.push(`start ${m.id}`)
      if (m.id === 0) await gate.promise
      log.push(`end ${m.id}`)
    }
    const done = collect(pipe(fromArray(fakeMessages(3)), retry(handler, { attempts: 1 })))
    await settle()
    expect(log).toEqual(['start 0'])
    gate.resolve()
    const results = await done
    expect(log).toEqual(['start 0', 'end 0', 'start 1', 'end 1', 'start 2', 'end 2'])
    expect(results.map((r) => r.message.id)).toEqual([0, 1, 2])
  })

  it('return() during a backoff wait resolves at once, clears the timer and leaves the message unsettled', async () => {
    // On a fake clock: "at once" means before the clock moves, so load cannot blur it with the 40 ms backoff.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    try {
      const m = fakeMessage(0)
      let calls = 0
      const src = new ManualSource<FakeMessage>({ hangingReturn: true })
      src.push(m)
      const it = pipe(
        src,
        retry(
          () => {
            calls++
            throw new Error('no')
          },
          { attempts: 5, backoff: { initialMs: 40, jitter: 0 } },
        ),
      )[Symbol.asyncIterator]()
      const next = it.next()
      await settle()
      expect(calls).toBe(1) // now in the 40 ms backoff
      const before = vi.getTimerCount()
      let returned = false
      void it.return!().then(() => (returned = true))
      await settle()
      expect(returned).toBe(true) // the clock has not moved: it did not wait out the backoff
      expect(vi.getTimerCount()).toBe(before - 1) // the backoff timer is cleared
      let ended: IteratorResult<unknown> | undefined
      void next.then((r) => (ended = r))
      await settle()
      expect(ended).toEqual({ done: true, value: undefined })
      await vi.advanceTimersByTimeAsync(80) // past the backoff: no retry after return()
      expect(calls).toBe(1)
      expect(settlements(m)).toBe(0)
      expect(src.returnCalls).toBe(1)
    } finally {
      vi.useRealTimers()
    }
  })

  it('return() while the source next() is pending resolves promptly and calls the source return()', async () => {
    const src = new ManualSource<FakeMessage>({ hangingReturn: true })
    const it = pipe(
      src,
      retry(() => undefined, { attempts: 1 }),
    )[Symbol.asyncIterator]()
    const next = it.next()
    await settle()
    expect(await within(it.return!(), PROMPT_MS)).toEqual({ value: { done: true, value: undefined } })
    expect(await within(next, PROMPT_MS)).toEqual({ value: { done: true, value: undefined } })
    expect(src.returnCalls).toBe(1)
  })

  it('an abort during a handler call throws AbortError at once; the message stays unsettled', async () => {
    const ac = new AbortController()
    const m = fakeMessage(0)
    const gate = deferred()
    const it = pipe(
      fromArray([m]),
      retry(() => gate.promise, { attempts: 3, signal: ac.signal }),
    )[Symbol.asyncIterator]()
    const next = it.next()
    await settle()
    ac.abort()
    const r = await within(next, PROMPT_MS)
    expect((r as { error: unknown }).error).toBeInstanceOf(AbortError)
    gate.resolve()
    await settle()
    expect(settlements(m)).toBe(0)
  })

  it('an abort during a backoff wait throws AbortError and makes no further call', async () => {
    const ac = new AbortController()
    let calls = 0
    const it = pipe(
      fromArray([fakeMessage(0)]),
      retry(
        () => {
          calls++
          throw new Error('x')
        },
        { attempts: 3, backoff: { initialMs: 10_000 }, signal: ac.signal },
      ),
    )[Symbol.asyncIterator]()
    const next = it.next()
    await settle()
    setTimeout(() => ac.abort(), 5)
    await expect(next).rejects.toBeInstanceOf(AbortError)
    expect(calls).toBe(1)
  })

  it('works in IxJS: from(source).pipe(retry(...))', async () => {
    const out: Array<RetryResult<FakeMessage>> = await collect(
      from(fromArray(fakeMessages(2))).pipe(retry<FakeMessage>(() => undefined, { attempts: 1 })),
    )
    expect(out.map((r) => [r.message.id, r.ok])).toEqual([
      [0, true],
      [1, true],
    ])
  })

  it('rejects bad options with InvalidArgumentError naming the value', () => {
    const h = () => undefined
    expect(() => retry(h, { attempts: 0 })).toThrow(InvalidArgumentError)
    expect(() => retry(h, { attempts: 0 })).toThrow(/attempts must be an integer >= 1, got 0/)
    expect(() => retry(h, {} as { attempts: number })).toThrow(/got undefined/)
    expect(() => retry(h, { attempts: 2, backoff: { jitter: 2 } })).toThrow(/jitter must be a number 0\.\.1, got 2/)
    expect(() => retry(h, { attempts: 2, backoff: { multiplier: 0.5 } })).toThrow(/multiplier.*got 0\.5/)
    expect(() => retry(h, { attempts: 2, backoff: { initialMs: -1 } })).toThrow(/initialMs.*got -1/)
    expect(() => retry(h, { attempts: 2, backoff: { initialMs: 500, maxMs: 100 } })).toThrow(
      /maxMs \(100\) must be >= backoff\.initialMs \(500\)/,
    )
    expect(() => retry(h, { attempts: 2, retryIf: 'yes' as unknown as () => boolean })).toThrow(
      /retryIf must be a function/,
    )
    expect(() => retry(h, { attempts: 2, deadLetter: 'no' as unknown as boolean })).toThrow(
      /deadLetter must be a boolean, got "no"/,
    )
    expect(() => retry(undefined as unknown as () => void, { attempts: 1 })).toThrow(
      /handler must be a function, got undefined/,
    )
  })
})

describe('backoffDelay()', () => {
  const b = resolveBackoff('test', { initialMs: 100, maxMs: 1000, multiplier: 2, jitter: 0 })

  it('grows by the multiplier from initialMs and stops at maxMs', () => {
    expect([1, 2, 3, 4, 5, 6].map((n) => backoffDelay(b, n))).toEqual([100, 200, 400, 800, 1000, 1000])
  })

  it('stays finite for huge attempt counts and with initialMs 0', () => {
    expect(backoffDelay(b, 10_000)).toBe(1000)
    expect(backoffDelay(resolveBackoff('t', { initialMs: 0, maxMs: 0 }), 10_000)).toBe(0)
  })

  it('keeps jitter within ±jitter of the delay, and never above maxMs', () => {
    const j = resolveBackoff('t', { initialMs: 100, maxMs: 1000, multiplier: 2, jitter: 0.2 })
    expect(backoffDelay(j, 1, () => 0)).toBeCloseTo(80)
    expect(backoffDelay(j, 1, () => 0.999999)).toBeCloseTo(120, 3)
    expect(backoffDelay(j, 1, () => 0.5)).toBeCloseTo(100)
    for (let i = 0; i < 1000; i++) {
      const d = backoffDelay(j, 2)
      expect(d).toBeGreaterThanOrEqual(160)
      expect(d).toBeLessThanOrEqual(240)
      expect(backoffDelay(j, 5)).toBeLessThanOrEqual(1000)
    }
  })

  it('defaults to 100 ms, × 2, 30 s cap, 20 % jitter', () => {
    expect(resolveBackoff('t', undefined)).toEqual({ initialMs: 100, maxMs: 30_000, multiplier: 2, jitter: 0.2 })
  })
})
