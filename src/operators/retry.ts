import { asyncIterableOption } from './options.js'
import {
  giveUp,
  resolveRetryOptions,
  retryDelay,
  shouldRetry,
  type RetryHandler,
  type RetryOptions,
  type RetryPolicy,
  type RetryResult,
} from './retry-policy.js'
import { AsyncIterableX } from 'ix/asynciterable/asynciterablex'
import { outcomeOf, type Settleable } from './settleable.js'
import type { RetryOperator } from './typed-operators.js'
import { PerMessageIterator } from './per-message.js'
import { STOPPED } from './upstream.js'

/**
 * Runs `handler(message, attempt)` until it succeeds, up to `attempts` times, waiting a backoff
 * between attempts; then settles the message and emits a {@link RetryResult}:
 *
 * - success → `ack()`, emits `{ message, ok: true, attempts }`;
 * - every attempt failed, or `retryIf(error)` said no → `term(reason)` (reason: the error's
 *   message; the consumer dead-letters it if it has a dead-letter topic) or, with
 *   `deadLetter: false`, `nack()`; emits `{ message, ok: false, attempts, error }` with the last
 *   error. The iteration goes on with the next message.
 *
 * Messages are processed one at a time, in source order: a message's retries delay the messages
 * behind it (which is what keeps per-partition order). The source is read only while the consumer
 * of this operator waits, so at most one message is held. The handler is never called more than
 * `attempts` times per message, and each message is settled exactly once, just before its result
 * is emitted. `return()` and the signal end the iteration at once, even during a handler call or a
 * backoff wait (the timer is cleared); the message being worked on then stays unsettled, and a
 * handler call already running finishes without effect.
 *
 * @example
 * ```ts
 * import { pipe, retry } from 'twainmq/operators'
 * const results = pipe(consumer, retry((m) => deliver(m.value), { attempts: 5, backoff: { initialMs: 200 } }))
 * for await (const r of results) if (!r.ok) console.warn('dead-lettered', r.message.offset, r.error)
 * ```
 */
export function retry<T extends Settleable & H, H = T>(
  handler: RetryHandler<H>,
  options: RetryOptions,
): RetryOperator<T> {
  const policy = resolveRetryOptions('retry()', handler, options)
  return <M extends T>(source: AsyncIterable<M>) => {
    asyncIterableOption('retry()', source)
    return new RetryIterable<M>(source, handler, policy)
  }
}

class RetryIterable<T extends Settleable> extends AsyncIterableX<RetryResult<T>> {
  constructor(
    private readonly source: AsyncIterable<T>,
    private readonly handler: RetryHandler<T>,
    private readonly policy: RetryPolicy,
  ) {
    super()
  }

  [Symbol.asyncIterator](signal?: AbortSignal): AsyncIterableIterator<RetryResult<T>> {
    return new RetryIterator(this.source, this.handler, this.policy, signal)
  }
}

class RetryIterator<T extends Settleable> extends PerMessageIterator<T, RetryResult<T>> {
  readonly #handler: RetryHandler<T>
  readonly #policy: RetryPolicy

  constructor(source: AsyncIterable<T>, handler: RetryHandler<T>, policy: RetryPolicy, outer: AbortSignal | undefined) {
    super(source, policy.signal, outer)
    this.#handler = handler
    this.#policy = policy
  }

  protected async handle(message: T): Promise<IteratorResult<RetryResult<T>>> {
    for (let attempt = 1; ; attempt++) {
      const outcome = await this.up.until(outcomeOf(this.#handler, message, attempt))
      if (outcome === STOPPED || this.up.stopped) return this.stopped(message)
      if (outcome.ok) {
        message.ack()
        return { done: false, value: { message, ok: true, attempts: attempt } }
      }
      let again: boolean
      try {
        again = shouldRetry(this.#policy, attempt, outcome.error)
      } catch (error) {
        message.nack()
        this.fail()
        throw error
      }
      if (!again) {
        giveUp(this.#policy, message, outcome.error)
        return { done: false, value: { message, ok: false, attempts: attempt, error: outcome.error } }
      }
      if ((await this.up.sleep(retryDelay(this.#policy, attempt))) === STOPPED) return this.stopped(message)
    }
  }
}
