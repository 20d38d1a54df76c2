/**
 * Test doubles for the operator tests (not a test file): messages that count their settlements,
 * a source the test feeds by hand, and deferred promises to control when handlers finish.
 */
import type { Settleable } from '../../../src/operators/index.js'

/** A message that records every ack / nack / term call. */
export interface FakeMessage extends Settleable {
  readonly id: number
  readonly key?: unknown
  acks: number
  nacks: number
  terms: number
  nackOptions: Array<{ delayMs?: number } | undefined>
  termReasons: Array<string | undefined>
}

export function fakeMessage(id: number, key?: unknown): FakeMessage {
  const m: FakeMessage = {
    id,
    acks: 0,
    nacks: 0,
    terms: 0,
    nackOptions: [],
    termReasons: [],
    ack() {
      m.acks++
    },
    nack(options) {
      m.nacks++
      m.nackOptions.push(options)
    },
    term(reason) {
      m.terms++
      m.termReasons.push(reason)
    },
  }
  if (key !== undefined) (m as { key?: unknown }).key = key
  return m
}

/** `n` fake messages with ids 0..n-1 and keys `keyOf(i)`. */
export function fakeMessages(n: number, keyOf: (i: number) => unknown = (i) => i): FakeMessage[] {
  return Array.from({ length: n }, (_, i) => fakeMessage(i, keyOf(i)))
}

/** How many times a message was settled in any way. */
export const settlements = (m: FakeMessage): number => m.acks + m.nacks + m.terms

/** An async iterable over `items` (each `next()` resolves on a later microtask). */
export async function* fromArray<T>(items: readonly T[]): AsyncGenerator<T> {
  for (const item of items) yield item
}

export interface Deferred<T> {
  promise: Promise<T>
  resolve: (value: T) => void
  reject: (error: unknown) => void
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void
  let reject!: (error: unknown) => void
  const promise = new Promise<T>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}

/**
 * A source fed by the test: `push(item)`, `end()`, `fail(error)`. Its iterator counts `next()` and
 * `return()` calls. With `hangingReturn`, `return()` never resolves (like IxJS `from()` or an async
 * generator blocked in `next()`), so an operator that awaits it would hang.
 */
export class ManualSource<T> implements AsyncIterable<T> {
  nextCalls = 0
  returnCalls = 0
  private readonly queue: Array<IteratorResult<T> | { error: unknown }> = []
  private waiting: Deferred<IteratorResult<T>> | undefined

  constructor(private readonly options: { hangingReturn?: boolean } = {}) {}

  /** A `next()` is waiting for an item. */
  get pending(): boolean {
    return this.waiting !== undefined
  }

  push(...items: T[]): void {
    for (const value of items) this.deliver({ done: false, value })
  }

  end(): void {
    this.deliver({ done: true, value: undefined })
  }

  fail(error: unknown): void {
    this.deliver({ error })
  }

  private deliver(r: IteratorResult<T> | { error: unknown }): void {
    const w = this.waiting
    if (w) {
      this.waiting = undefined
      if ('error' in r) w.reject(r.error)
      else w.resolve(r)
    } else this.queue.push(r)
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => {
        this.nextCalls++
        const r = this.queue.shift()
        if (r) return 'error' in r ? Promise.reject(r.error) : Promise.resolve(r)
        this.waiting = deferred()
        return this.waiting.promise
      },
      return: () => {
        this.returnCalls++
        if (this.options.hangingReturn) return new Promise<IteratorResult<T>>(() => undefined)
        return Promise.resolve({ done: true, value: undefined })
      },
    }
  }
}

/** Let pending promise callbacks run (a few macrotask turns). */
export const settle = async (): Promise<void> => {
  for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r))
}

/** The promise's outcome within `ms`, or 'pending'. */
export async function within<T>(p: Promise<T>, ms: number): Promise<{ value: T } | { error: unknown } | 'pending'> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<'pending'>((r) => (timer = setTimeout(() => r('pending'), ms)))
  try {
    return await Promise.race([
      p.then(
        (value) => ({ value }),
        (error: unknown) => ({ error }),
      ),
      timeout,
    ])
  } finally {
    clearTimeout(timer)
  }
}
