import type { AsyncIterableX } from 'ix/asynciterable/asynciterablex'
import type { Joined } from './joined.js'
import type { MessageBatch } from './message-batch.js'
import type { RetryResult } from './retry-policy.js'
import type { Settleable } from './settleable.js'

/*
 * Why each operator type has two call signatures. The generic one makes a direct call keep the
 * source's own message type (`ack(handler)(consumer)` yields `GroupMessage<Order>`, not the
 * handler's parameter type). The plain one is what TypeScript infers from when the operator is an
 * argument of `pipe(source, op)` (ours, IxJS's or RxJS's): it gives an un-annotated handler its
 * message type from the source (`ack((m) => save(m.value))`).
 */

/** What `ack` and `filterAck` return: emits the source's messages, typed as the source types them. */
export interface MessageOperator<T> {
  <M extends T>(source: AsyncIterable<M>): AsyncIterableX<M>
  (source: AsyncIterable<T>): AsyncIterableX<T>
}

/** What `batch` returns: emits `MessageBatch`es of the source's messages. */
export interface BatchOperator<T extends Settleable> {
  <M extends T>(source: AsyncIterable<M>): AsyncIterableX<MessageBatch<M>>
  (source: AsyncIterable<T>): AsyncIterableX<MessageBatch<T>>
}

/** What `retry` returns: emits a `RetryResult` per source message. */
export interface RetryOperator<T> {
  <M extends T>(source: AsyncIterable<M>): AsyncIterableX<RetryResult<M>>
  (source: AsyncIterable<T>): AsyncIterableX<RetryResult<T>>
}

/** What `joinTable` returns: emits a `Joined` per source message (of those an inner join keeps). */
export interface JoinOperator<T extends Settleable, V> {
  <M extends T>(source: AsyncIterable<M>): AsyncIterableX<Joined<M, V>>
  (source: AsyncIterable<T>): AsyncIterableX<Joined<T, V>>
}
