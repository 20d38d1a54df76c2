/**
 * `twainmq/operators`: ack, batch, retry, filterAck and joinTable for consumer-group messages as plain
 * `(AsyncIterable) => AsyncIterable` functions (usable in our `pipe` and in IxJS's
 * `from(x).pipe(op)`). The RxJS versions are in `twainmq/rx`. See docs/operators.md.
 */
export { ack } from './ack.js'
export type { AckHandler, AckOptions } from './ack.js'
export { batch } from './batch.js'
export { filterAck } from './filter-ack.js'
export type { FilterAckOptions, FilterAckPredicate } from './filter-ack.js'
export type { BatchOptions } from './batch.js'
export type { MessageBatch } from './message-batch.js'
export { retry } from './retry.js'
export type { RetryHandler, RetryOptions, RetryResult } from './retry-policy.js'
export type { BackoffOptions } from './backoff.js'
export { joinTable } from './join-table.js'
export { Joined } from './joined.js'
export type { JoinableTable, JoinTableOptions } from './join-table.js'
export { pipe } from './pipe.js'
export type { AsyncOperator, Operator, Settleable } from './settleable.js'
export type { BatchOperator, JoinOperator, MessageOperator, RetryOperator } from './typed-operators.js'
