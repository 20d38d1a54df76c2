import type { Observable } from 'rxjs'
import type { Joined } from '../joined.js'
import type { MessageBatch } from '../message-batch.js'
import type { RetryResult } from '../retry-policy.js'
import type { Settleable } from '../settleable.js'

// Two call signatures each, for the reason given in ../typed-operators.ts: a direct call keeps the
// source's message type, and inside `source.pipe(op)` an un-annotated handler gets it.

/** What `ackRx` and `filterAckRx` return: emits the source's messages, typed as the source types them. */
export interface MessageOperatorRx<T> {
  <M extends T>(source: Observable<M>): Observable<M>
  (source: Observable<T>): Observable<T>
}

/** What `batchRx` returns: emits `MessageBatch`es of the source's messages. */
export interface BatchOperatorRx<T extends Settleable> {
  <M extends T>(source: Observable<M>): Observable<MessageBatch<M>>
  (source: Observable<T>): Observable<MessageBatch<T>>
}

/** What `retryRx` returns: emits a `RetryResult` per source message. */
export interface RetryOperatorRx<T> {
  <M extends T>(source: Observable<M>): Observable<RetryResult<M>>
  (source: Observable<T>): Observable<RetryResult<T>>
}

/** What `joinTableRx` returns: emits a `Joined` per source message (of those an inner join keeps). */
export interface JoinOperatorRx<T extends Settleable, V> {
  <M extends T>(source: Observable<M>): Observable<Joined<M, V>>
  (source: Observable<T>): Observable<Joined<T, V>>
}
