/*
 * What the producer, the consumer, the facade and the gateway see of the telemetry: plain types
 * that name nothing of @opentelemetry/api, so the published declarations of the classes that carry
 * them (a producer's constructor, a consumer's context) type-check in an application without the
 * package. The telemetry's own files implement them (`Telemetry`, `GroupTelemetry`, `MessageTrace`).
 */

/** A span's context, as the telemetry passes it around (an OpenTelemetry `SpanContext`). */
export interface TraceContext {
  readonly traceId: string
  readonly spanId: string
  readonly traceFlags: number
}

/** An instance's telemetry, as its producers and the gateway use it. */
export interface InstanceTelemetry {
  /** Sends inside a span store its context in their headers, unless a producer says otherwise. */
  readonly propagate: boolean
  /** The active span's context, when there is a valid one. */
  activeContext(): TraceContext | undefined
  /** `headers` (not changed) with `sc` added as `traceparent` (and `tracestate`). */
  withContext(headers: Record<string, string> | undefined, sc: TraceContext): Record<string, string>
}

/** How a delivery ended: the settlement, or `release` (handed back unprocessed, not counted). */
export type Settlement = 'ack' | 'nack' | 'term' | 'release'

/** What the telemetry reads of a delivered message. */
export interface DeliveredMessage {
  readonly topic: string
  readonly partition: number
  readonly offset: number
  readonly headers: Record<string, string>
  readonly deliveryCount: number
}

/** The telemetry of one delivery, ended by its settlement. */
export interface DeliveryTrace {
  /** The headers of an output sent while processing the delivery (a processor's `m.send`). */
  outputHeaders(headers: Record<string, string> | undefined): Record<string, string> | undefined
  /** The delivery of `m` ended: `how`, with the term's `reason`. */
  settled(how: Settlement, m: { readonly topic: string; readonly partition: number }, reason?: string): void
}

/** The telemetry of one member of a group. */
export interface DeliveryTelemetry {
  /** Messages handed to the application: each one's trace, in order (undefined: nothing to record). */
  delivered(messages: readonly DeliveredMessage[]): Array<DeliveryTrace | undefined>
}
