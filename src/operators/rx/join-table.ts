import { EMPTY, concatMap, defer, of, throwError, type Observable } from 'rxjs'
import { resolveJoinTable, type JoinableTable, type JoinTableOptions } from '../join-table.js'
import { Joined } from '../joined.js'
import type { Settleable } from '../settleable.js'
import { abortable } from './abortable.js'
import type { JoinOperatorRx } from './typed-operators.js'

/**
 * The RxJS version of `joinTable` (`twainmq/operators`): each message comes on as a `Joined` with
 * the table's value for its key when it is handed on. The source is subscribed to once
 * `table.ready()` has resolved; a table that fails to get ready errors the stream. `inner: true`
 * acks and drops messages the table has no value for. A `key` function that throws nacks its
 * message and errors the stream. The `signal` errors the stream with `AbortError`.
 *
 * @example
 * ```ts
 * import { joinTableRx } from 'twainmq/rx'
 * from(orders).pipe(joinTableRx(customers, { key: (m) => m.value.customerId })).subscribe((j) => {
 *   console.log(j.message.offset, j.value?.tier)
 *   j.ack()
 * })
 * ```
 */
export function joinTableRx<V, K, T extends Settleable & H, H = T>(
  table: JoinableTable<V, K>,
  options?: JoinTableOptions<H, K>,
): JoinOperatorRx<T, V> {
  const o = resolveJoinTable('joinTableRx()', table, options)
  return (<M extends T>(source: Observable<M>) =>
    defer(() => table.ready()).pipe(
      concatMap(() => source),
      concatMap((m): Observable<Joined<M, V>> => {
        let value: V | undefined
        try {
          value = table.get(o.key === undefined ? (m.key as K) : o.key(m as unknown as H))
        } catch (error) {
          m.nack()
          return throwError(() => error)
        }
        if (value === undefined && o.inner) {
          m.ack()
          return EMPTY
        }
        return of(new Joined(m, value))
      }),
      abortable(o.signal),
    )) as JoinOperatorRx<T, V>
}
