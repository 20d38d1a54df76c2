/*
 * Attribute names and values of the OpenTelemetry messaging semantic conventions
 * (https://opentelemetry.io/docs/specs/semconv/messaging/) that twainmq records. The conventions
 * have no generic offset attribute: the offset is `twainmq.offset`, as Kafka's is `kafka.offset`
 * (formerly `messaging.kafka.offset`).
 */

export const SYSTEM = 'messaging.system'
export const SYSTEM_NAME = 'twainmq'
export const DESTINATION = 'messaging.destination.name'
export const PARTITION = 'messaging.destination.partition.id'
export const GROUP = 'messaging.consumer.group.name'
export const OPERATION_NAME = 'messaging.operation.name'
export const OPERATION_TYPE = 'messaging.operation.type'
export const BATCH_COUNT = 'messaging.batch.message_count'
export const CLIENT_ID = 'messaging.client.id'
export const OFFSET = 'twainmq.offset'
export const ERROR_TYPE = 'error.type'

/** The W3C Trace Context headers a message carries its creation context in. */
export const TRACEPARENT = 'traceparent'
export const TRACESTATE = 'tracestate'

/** Metric names (messaging metrics conventions, plus the consumer lag gauges). */
export const SENT_MESSAGES = 'messaging.client.sent.messages'
export const CONSUMED_MESSAGES = 'messaging.client.consumed.messages'
export const OPERATION_DURATION = 'messaging.client.operation.duration'
export const PROCESS_DURATION = 'messaging.process.duration'
export const LAG_MESSAGES = 'messaging.consumer.lag'
export const LAG_AGE = 'messaging.consumer.lag.age'

/** `error.type` of a failure: the error's class name (`TimeoutError`, `FencedError`…), else `_OTHER`. */
export function errorType(e: unknown): string {
  const name = (e as { name?: unknown } | null)?.name
  return typeof name === 'string' && name.length > 0 ? name : '_OTHER'
}
