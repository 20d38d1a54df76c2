import type { Attributes, Context, Span, SpanContext } from '@opentelemetry/api'
import * as A from './attributes.js'
import type { DeliveredMessage, DeliveryTelemetry, DeliveryTrace, InstanceTelemetry, Settlement } from './hooks.js'
import type { Telemetry } from './telemetry.js'

/**
 * The hand-out of messages to the application, and for a message that carries a trace context its
 * `process <topic>` span (a child of the message's creation context, with a link to it, as the
 * conventions have it for a message processed alone), from the hand-out to the settlement, which
 * ends it with an event (`ack`, `nack`, `term`). The messages of one hand-out without a span share
 * one of these (their processing time is measured from the same instant).
 */
export class MessageTrace implements DeliveryTrace {
  readonly #start = performance.now()

  constructor(
    private readonly group: GroupTelemetry,
    /** The process span, when traced. */
    readonly span: Span | undefined,
  ) {}

  /**
   * The headers of an output sent while processing this delivery (a processor's `m.send`): with
   * the process span's context as their creation context, when traced and propagated.
   */
  outputHeaders(headers: Record<string, string> | undefined): Record<string, string> | undefined {
    const tel = this.group.tel
    if (this.span === undefined || !tel.propagate) return headers
    return tel.withContext(headers, this.span.spanContext())
  }

  /** The delivery of `m` ended: `how`, with the term's `reason`. */
  settled(how: Settlement, m: { readonly topic: string; readonly partition: number }, reason?: string): void {
    const span = this.span
    if (span !== undefined) {
      if (how !== 'release')
        span.addEvent(how, {
          [A.OPERATION_NAME]: how,
          [A.OPERATION_TYPE]: 'settle',
          ...(reason === undefined ? {} : { 'twainmq.term.reason': reason }),
        })
      if (how === 'term')
        span.setStatus({ code: this.group.tel.api.SpanStatusCode.ERROR, message: reason ?? 'terminated' })
      span.end()
    }
    const instruments = this.group.tel.instruments
    if (instruments !== undefined && this.group.tel.processDuration && how !== 'release')
      instruments.processDuration.record((performance.now() - this.#start) / 1000, this.group.attributes(m))
  }
}

/** The telemetry of one member of a group (a consumer or a processor). */
export class GroupTelemetry implements DeliveryTelemetry {
  readonly #root: Context
  /** Process spans also for messages without a trace context (`telemetry.rootSpans`). */
  readonly #roots: boolean
  /** The metric attributes per topic and partition. */
  readonly #attrs = new Map<string, Attributes[]>()

  constructor(
    readonly tel: Telemetry,
    readonly name: string,
    private readonly clientId: string,
  ) {
    this.#root = tel.api.ROOT_CONTEXT
    this.#roots = tel.rootSpans
  }

  /** The metric attributes of a group's message. */
  attributes(m: { readonly topic: string; readonly partition: number }): Attributes {
    let byPartition = this.#attrs.get(m.topic)
    if (byPartition === undefined) this.#attrs.set(m.topic, (byPartition = []))
    return (byPartition[m.partition] ??= this.tel.attributes('process', 'process', m.topic, m.partition, this.name))
  }

  /**
   * Messages handed to the application: each gets its trace (returned in order; undefined for a
   * message with nothing to record at its settlement), and they are counted in
   * `messaging.client.consumed.messages` (one add per partition of the batch).
   */
  delivered(messages: readonly DeliveredMessage[]): Array<MessageTrace | undefined> {
    const tel = this.tel
    const tracer = tel.tracer
    const timed = tel.processDuration && tel.instruments !== undefined
    const out = new Array<MessageTrace | undefined>(messages.length)
    let shared: MessageTrace | undefined
    let counts: Map<Attributes, number> | undefined
    for (let i = 0; i < messages.length; i++) {
      const m = messages[i] as DeliveredMessage
      const creation = tracer === undefined ? undefined : tel.contextOf(m.headers)
      out[i] =
        tracer !== undefined && (creation !== undefined || this.#roots)
          ? new MessageTrace(this, this.#span(m, creation))
          : timed
            ? (shared ??= new MessageTrace(this, undefined))
            : undefined
      if (tel.instruments !== undefined) {
        const a = this.attributes(m)
        ;(counts ??= new Map()).set(a, (counts.get(a) ?? 0) + 1)
      }
    }
    if (counts !== undefined) for (const [a, n] of counts) tel.instruments?.consumed.add(n, a)
    return out
  }

  #span(m: DeliveredMessage, creation: SpanContext | undefined): Span {
    const tel = this.tel
    const attributes: Attributes = {
      [A.SYSTEM]: A.SYSTEM_NAME,
      [A.OPERATION_NAME]: 'process',
      [A.OPERATION_TYPE]: 'process',
      [A.DESTINATION]: m.topic,
      [A.PARTITION]: String(m.partition),
      [A.GROUP]: this.name,
      [A.OFFSET]: m.offset,
      [A.CLIENT_ID]: this.clientId,
      'twainmq.delivery_count': m.deliveryCount,
    }
    const parent = creation === undefined ? this.#root : tel.api.trace.setSpanContext(this.#root, creation)
    return (tel.tracer as NonNullable<Telemetry['tracer']>).startSpan(
      `process ${m.topic}`,
      {
        kind: tel.api.SpanKind.CONSUMER,
        attributes,
        ...(creation === undefined ? {} : { links: [{ context: creation }] }),
      },
      parent,
    )
  }
}

/** The telemetry of a member of group `name` of an instance whose telemetry is `tel` (a `Telemetry`). */
export function groupTelemetry(tel: InstanceTelemetry, name: string, clientId: string): DeliveryTelemetry {
  return new GroupTelemetry(tel as Telemetry, name, clientId)
}
