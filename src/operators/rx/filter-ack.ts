import { EMPTY, catchError, concatMap, defer, of, throwError, type Observable } from 'rxjs'
import { isThenable, resolveFilterAck, type FilterAckOptions, type FilterAckPredicate } from '../filter-ack.js'
import type { Settleable } from '../settleable.js'
import { abortable } from './abortable.js'
import type { MessageOperatorRx } from './typed-operators.js'

/**
 * The RxJS version of `filterAck` (`twainmq/operators`): passes on the messages `predicate` keeps
 * and acks the ones it drops, so filtering never stalls a consumer group (RxJS's `filter` leaves
 * dropped messages in flight; once `maxInFlight` of them pile up the consumer stops receiving).
 *
 * The predicate may be async; messages are tested one at a time, in order. A predicate that throws
 * or rejects gets its message nacked and errors the stream. Unsubscribing ignores a running async
 * predicate (its message stays unsettled). The `signal` errors the stream with `AbortError`.
 *
 * @example
 * ```ts
 * import { ackRx, filterAckRx } from 'twainmq/rx'
 * from(consumer).pipe(filterAckRx((m) => m.type === 'Order'), ackRx(handle)).subscribe()
 * ```
 */
export function filterAckRx<T extends Settleable & H, H = T>(
  predicate: FilterAckPredicate<H>,
  options?: FilterAckOptions,
): MessageOperatorRx<T> {
  const signal = resolveFilterAck('filterAckRx()', predicate, options)
  return <M extends T>(source: Observable<M>) =>
    source.pipe(
      concatMap((m): Observable<M> => {
        const failed = (error: unknown): Observable<never> => {
          m.nack()
          return throwError(() => error)
        }
        const decide = (keep: unknown): Observable<M> => {
          if (keep) return of(m)
          m.ack()
          return EMPTY
        }
        let keep: unknown
        try {
          keep = predicate(m)
        } catch (error) {
          return failed(error)
        }
        if (!isThenable(keep)) return decide(keep)
        const pending = keep
        return defer(async () => pending).pipe(catchError(failed), concatMap(decide))
      }),
      abortable(signal),
    )
}
