import { concatMap, defer, of, throwError, timer, type Observable } from 'rxjs'
import {
  giveUp,
  resolveRetryOptions,
  retryDelay,
  shouldRetry,
  type RetryHandler,
  type RetryOptions,
  type RetryResult,
} from '../retry-policy.js'
import { outcomeOf, type Settleable } from '../settleable.js'
import { abortable } from './abortable.js'
import type { RetryOperatorRx } from './typed-operators.js'

/**
 * The RxJS version of `retry` (`twainmq/operators`), with the same options and the same policy
 * (`shouldRetry`, `retryDelay`, `giveUp`): `concatMap` over messages, each one a chain of
 * `defer(handler)` attempts separated by backoff `timer`s.
 *
 * Success → `ack()` and `{ message, ok: true, attempts }`; exhausted or not retryable → `term(reason)`
 * (or `nack()` with `deadLetter: false`) and `{ message, ok: false, attempts, error }`. One message
 * at a time, in order; the handler is never called more than `attempts` times per message.
 * Unsubscribing clears a pending backoff timer and ignores a running handler call (the message then
 * stays unsettled). The `signal` errors it with `AbortError`.
 *
 * @example
 * ```ts
 * import { retryRx } from 'twainmq/rx'
 * from(consumer).pipe(retryRx((m) => deliver(m.value), { attempts: 5 })).subscribe((r) => r.ok || warn(r.error))
 * ```
 */
export function retryRx<T extends Settleable & H, H = T>(
  handler: RetryHandler<H>,
  options: RetryOptions,
): RetryOperatorRx<T> {
  const policy = resolveRetryOptions('retryRx()', handler, options)

  const attemptFrom = <M extends T>(message: M, attempt: number): Observable<RetryResult<M>> =>
    defer(() => outcomeOf(handler, message, attempt)).pipe(
      concatMap((outcome): Observable<RetryResult<M>> => {
        if (outcome.ok) {
          message.ack()
          return of({ message, ok: true, attempts: attempt })
        }
        let again: boolean
        try {
          again = shouldRetry(policy, attempt, outcome.error)
        } catch (error) {
          message.nack()
          return throwError(() => error)
        }
        if (!again) {
          giveUp(policy, message, outcome.error)
          return of({ message, ok: false, attempts: attempt, error: outcome.error })
        }
        return timer(retryDelay(policy, attempt)).pipe(concatMap(() => attemptFrom(message, attempt + 1)))
      }),
    )

  return <M extends T>(source: Observable<M>) =>
    source.pipe(
      concatMap((message) => attemptFrom(message, 1)),
      abortable(policy.signal),
    )
}
