import { Observable, Subscription, tap } from 'rxjs'
import { laneOfMessage, resolveAckOptions, type AckHandler, type AckOptions } from '../ack.js'
import { KeyLanes } from '../key-lanes.js'
import { handlerAndOptions } from '../options.js'
import { outcomeOf, type Settleable } from '../settleable.js'
import { abortable } from './abortable.js'
import type { MessageOperatorRx } from './typed-operators.js'

/**
 * The RxJS version of `ack` (`twainmq/operators`), with the same options and the same per-key
 * scheduling (`KeyLanes`): runs `handler(message)` (if given), acks the message and emits it.
 *
 * - With `concurrency > 1`, messages of different keys run in parallel and messages of one key one
 *   after another (unless `perKey: false`); messages are emitted as their handlers finish.
 * - A message is acked right before it is emitted; a failed one is nacked and, once the handlers
 *   already running have finished, the first error errors the stream (the source is unsubscribed at
 *   the first failure; messages still waiting for their key stay un-acked).
 * - Unsubscribing (e.g. `take(n)`) ends it at once: handlers still running finish, but their
 *   messages are neither acked nor nacked. The `signal` errors it with `AbortError`.
 * - RxJS has no backpressure: messages the source pushes while all slots are busy wait in their
 *   lanes. A consumer group bounds them by its `maxInFlight` (un-acked messages).
 *
 * @example
 * ```ts
 * import { ackRx } from 'twainmq/rx'
 * from(consumer).pipe(ackRx((m) => save(m.value), { concurrency: 4 })).subscribe((m) => log(m.offset))
 * ```
 */
export function ackRx<T extends Settleable & H, H = T>(
  handler?: AckHandler<H>,
  options?: AckOptions,
): MessageOperatorRx<T>
/** Acks every message as it passes (no handler). */
export function ackRx<T extends Settleable = Settleable>(options?: AckOptions): MessageOperatorRx<T>
export function ackRx(first?: AckHandler<Settleable> | AckOptions, second?: AckOptions): MessageOperatorRx<Settleable> {
  const [handler, opts] = handlerAndOptions<AckHandler<Settleable>, AckOptions>('ackRx()', first, second)
  const { concurrency, perKey, signal } = resolveAckOptions('ackRx()', opts)
  return <T extends Settleable>(source: Observable<T>) =>
    (handler ? handled(source, handler, concurrency, perKey) : source.pipe(tap((m) => m.ack()))).pipe(abortable(signal))
}

/** `ackRx` with a handler: per-key lanes, ack before emission, the first failure errors the stream. */
function handled<T extends Settleable>(
  source: Observable<T>,
  handler: AckHandler<T>,
  concurrency: number,
  perKey: boolean,
): Observable<T> {
  return new Observable<T>((subscriber) => {
    const lanes = new KeyLanes<T>(concurrency, perKey ? laneOfMessage : undefined)
    const upstream = new Subscription()
    let failure: { error: unknown } | undefined
    let sourceDone = false
    let closed = false

    const end = (): void => {
      if (lanes.running > 0) return
      if (failure) subscriber.error(failure.error)
      else if (sourceDone && lanes.waiting === 0) subscriber.complete()
    }
    const startReady = (): void => {
      if (failure || closed) return
      for (const m of lanes.take()) run(m)
    }
    const run = (m: T): void => {
      void outcomeOf(handler, m).then((outcome) => {
        if (closed) return // unsubscribed: leave the message unsettled
        lanes.finish(m)
        if (outcome.ok) {
          m.ack()
          subscriber.next(m)
          if (closed) return
        } else {
          m.nack()
          if (!failure) {
            failure = { error: outcome.error }
            upstream.unsubscribe()
          }
        }
        startReady()
        end()
      })
    }

    upstream.add(
      source.subscribe({
        next: (m) => {
          if (failure) return
          lanes.push(m)
          startReady()
        },
        error: (error: unknown) => {
          failure ??= { error }
          end()
        },
        complete: () => {
          sourceDone = true
          end()
        },
      }),
    )
    return () => {
      closed = true
      upstream.unsubscribe()
    }
  })
}
