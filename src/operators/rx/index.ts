/**
 * `twainmq/rx`: the operators of `twainmq/operators` as RxJS `OperatorFunction`s, sharing their
 * options and policy code. Also exported as `ack`, `batch`, `retry`, `filterAck` and `joinTable`. Besides them,
 * `pullMap` maps a stream to an Observable that reads the stream at its handlers' pace.
 */
export { ackRx, ackRx as ack } from './ack.js'
export { batchRx, batchRx as batch } from './batch.js'
export { retryRx, retryRx as retry } from './retry.js'
export { filterAckRx, filterAckRx as filterAck } from './filter-ack.js'
export { joinTableRx, joinTableRx as joinTable } from './join-table.js'
export { pullMap, type PullMapOptions } from './pull-map.js'
export type { FilterAckOptions, FilterAckPredicate } from '../filter-ack.js'
export { Joined } from '../joined.js'
export type { JoinableTable, JoinTableOptions } from '../join-table.js'
export type { AckHandler, AckOptions } from '../ack.js'
export type { BatchOptions } from '../batch.js'
export type { MessageBatch } from '../message-batch.js'
export type { BackoffOptions } from '../backoff.js'
export type { RetryHandler, RetryOptions, RetryResult } from '../retry-policy.js'
export type { Settleable } from '../settleable.js'
export type { BatchOperatorRx, JoinOperatorRx, MessageOperatorRx, RetryOperatorRx } from './typed-operators.js'
