import { Observable, asyncScheduler, type Subscription } from 'rxjs'
import { resolveBatchOptions, type BatchOptions } from '../batch.js'
import { BatchAssembler, type MessageBatch } from '../message-batch.js'
import type { Settleable } from '../settleable.js'
import { abortable } from './abortable.js'
import type { BatchOperatorRx } from './typed-operators.js'

/**
 * The RxJS version of `batch` (`twainmq/operators`), with the same options and the same batch
 * assembly: like `bufferTime(maxWaitMs, null, size)`, but the timer starts at each batch's first
 * message (no empty batches, no ticking while idle) and batches are {@link MessageBatch}es with
 * `ack()`, `nack()` and `term()`.
 *
 * A full batch is emitted at once, a partial one `maxWaitMs` after its first message, the remainder
 * when the source completes or errors (then the error follows). Unsubscribing clears the timer; the
 * messages of the unfinished batch stay unsettled. The `signal` errors it with `AbortError`.
 *
 * @example
 * ```ts
 * import { batchRx } from 'twainmq/rx'
 * from(consumer).pipe(batchRx({ size: 100, maxWaitMs: 50 }), concatMap(async (b) => { await store(b); b.ack() }))
 * ```
 */
export function batchRx<T extends Settleable = Settleable>(options: BatchOptions): BatchOperatorRx<T> {
  const { size, maxWaitMs, signal } = resolveBatchOptions('batchRx()', options)
  return <M extends T>(source: Observable<M>) =>
    new Observable<MessageBatch<M>>((subscriber) => {
      const assembler = new BatchAssembler<M>(size)
      let timer: Subscription | undefined
      const emit = (batch: MessageBatch<M> | undefined): void => {
        timer?.unsubscribe()
        timer = undefined
        if (batch) subscriber.next(batch)
      }
      const upstream = source.subscribe({
        next: (m) => {
          const full = assembler.add(m)
          if (full) emit(full)
          else if (assembler.length === 1 && maxWaitMs !== Infinity) {
            timer = asyncScheduler.schedule(() => emit(assembler.flush()), maxWaitMs)
          }
        },
        error: (error: unknown) => {
          emit(assembler.flush())
          subscriber.error(error)
        },
        complete: () => {
          emit(assembler.flush())
          subscriber.complete()
        },
      })
      return () => {
        timer?.unsubscribe()
        upstream.unsubscribe()
      }
    }).pipe(abortable(signal))
}
