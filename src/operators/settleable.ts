import type { AsyncIterableX } from 'ix/asynciterable/asynciterablex'
import './stream-pipe-options.js'

/**
 * What the operators need from a message: the settlement methods of `GroupMessage` (`ack`,
 * `nack(delay)`, `term(reason)`) and, for per-key ordering, its key. Any object with these
 * methods works, so the operators also run over fakes in tests or over other brokers' messages.
 *
 * @example
 * ```ts
 * const m: Settleable = { key: 7, ack() {}, nack() {}, term() {} }
 * ```
 */
export interface Settleable {
  /** Done with it. */
  ack(): void
  /** Deliver it again (after `delayMs`). */
  nack(options?: { delayMs?: number }): void
  /** Give up on it (dead-letter it where the source supports that). */
  term(reason?: string): void
  /** The message key; `ack` with `perKey` keeps messages of one key in order. */
  readonly key?: unknown
  /**
   * Hand it back unprocessed (consumer messages have it): the operators call it for messages they
   * pulled but never emitted when an iteration ends, so the consumer can deliver them again at once
   * instead of waiting for them at `close()`.
   */
  release?(): void
}

/** Hand a pulled-but-unemitted message back to its source, where it supports that. */
export function releaseItem(item: unknown): void {
  const r = (item as { release?: unknown } | null)?.release
  if (typeof r === 'function') {
    try {
      r.call(item)
    } catch {
      /* nothing to report to */
    }
  }
}

/**
 * An operator over async iterables, as our `pipe(x, op)` takes it: any function from an
 * `AsyncIterable` to an `AsyncIterable` (IxJS operators and async generator functions included).
 */
export type Operator<T, U> = (source: AsyncIterable<T>) => AsyncIterable<U>

/**
 * What `ack`, `batch` and `retry` return: an {@link Operator} whose result is an IxJS
 * `AsyncIterableX` (IxJS's `OperatorAsyncFunction`), so it also fits IxJS's typed
 * `from(x).pipe(op1, op2, …)` and the result has IxJS's `.pipe()` and `.forEach()`.
 */
export type AsyncOperator<T, U> = (source: AsyncIterable<T>) => AsyncIterableX<U>

/**
 * The lane a key belongs to, as a string (so `Map` compares by value): numbers and bigints by their
 * decimal value (`7` and `7n` share a lane; `JSON.stringify` would throw on a bigint), strings as
 * text (`'7'` is a different lane). `undefined` means "no key": such messages are not ordered.
 */
export function laneOf(key: unknown): string | undefined {
  switch (typeof key) {
    case 'undefined':
      return undefined
    case 'number':
    case 'bigint':
      return `n:${String(key)}`
    case 'string':
      return `s:${key}`
    default:
      return `o:${String(key)}`
  }
}

/** The outcome of one handler call; never a rejected promise. */
export type Outcome = { readonly ok: true } | { readonly ok: false; readonly error: unknown }

const OK: Outcome = { ok: true }

/** Call `fn(...args)` and report how it went, whether it throws synchronously or rejects. */
export function outcomeOf<A extends unknown[]>(
  fn: ((...args: A) => unknown) | undefined,
  ...args: A
): Promise<Outcome> {
  if (fn === undefined) return Promise.resolve(OK)
  try {
    return Promise.resolve(fn(...args)).then(
      () => OK,
      (error: unknown) => ({ ok: false, error }),
    )
  } catch (error) {
    return Promise.resolve({ ok: false, error })
  }
}
