import type { Attributes, Context, Span, SpanContext } from '@opentelemetry/api'
import * as A from './attributes.js'
import type { Telemetry } from './telemetry.js'

/** What the telemetry reads of a delivered message. */
export interface DeliveredMessage {
  readonly topic: string
  readonly partition: number
  readonly offset: number
  readonly headers: Record<string, string>
  readonly deliveryCount: number
}

/** How a delivery ended: the settlement, or `release` (handed back unprocessed, not counted). */
export type Settlement = 'ack' | 'nack' | 'term' | 'release'

/**
 * One delivery of a message to the application: its `process <topic>` span (a child of the
 * message's creation context, with a link to it, as the conventions have it for a message
 * processed alone) from the hand-out to the settlement, which ends it with an event (`ack`,
 * `nack`, `term`), and the processing time it records.
 */
export class MessageTrace {
  readonly #start = performance.now()

  constructor(
    private readonly group: GroupTelemetry,
    private readonly topic: string,
    private readonly partition: number,
    /** The process span, when traces are on. */
    readonly span: Span | undefined,
  ) {}

  /** The span's context: what the outputs of a processor's message carry as their creation context. */
  get context(): SpanContext | undefined {
    return this.span?.spanContext()
  }

  /**
   * The headers of an output sent while processing this delivery (a processor's `m.send`): with
   * the process span's context as their creation context, when traced and propagated.
   */
  outputHeaders(headers: Record<string, string> | undefined): Record<string, string> | undefined {
    const tel = this.group.tel
    if (this.span === undefined || !tel.propagate) return headers
    return tel.withContext(headers, this.span.spanContext())
  }

  settled(how: Settlement, reason?: string): void {
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
    const m = this.group.tel.instruments
    if (m !== undefined && how !== 'release')
      m.processDuration.record(
        (performance.now() - this.#start) / 1000,
        this.group.tel.attributes('process', 'process', this.topic, this.partition, this.group.name),
      )
  }
}

/** The telemetry of one member of a group (a consumer or a processor). */
export class GroupTelemetry {
  readonly #root: Context

  constructor(
    readonly tel: Telemetry,
    readonly name: string,
    private readonly clientId: string,
  ) {
    this.#root = tel.api.ROOT_CONTEXT
  }

  /**
   * Messages handed to the application: each gets its trace (returned in order), and they are
   * counted in `messaging.client.consumed.messages` (one add per partition of the batch).
   */
  delivered(messages: readonly DeliveredMessage[]): MessageTrace[] {
    const tel = this.tel
    const tracer = tel.tracer
    const out = new Array<MessageTrace>(messages.length)
    let counts: Map<string, { topic: string; partition: number; n: number }> | undefined
    for (let i = 0; i < messages.length; i++) {
      const m = messages[i] as DeliveredMessage
      let span: Span | undefined
      if (tracer !== undefined) {
        const creation = tel.contextOf(m.headers)
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
        span = tracer.startSpan(
          `process ${m.topic}`,
          {
            kind: tel.api.SpanKind.CONSUMER,
            attributes,
            ...(creation === undefined ? {} : { links: [{ context: creation }] }),
          },
          parent,
        )
      }
      out[i] = new MessageTrace(this, m.topic, m.partition, span)
      if (tel.instruments !== undefined) {
        const key = `${m.topic}\0${m.partition}`
        const c = (counts ??= new Map()).get(key)
        if (c === undefined) counts.set(key, { topic: m.topic, partition: m.partition, n: 1 })
        else c.n++
      }
    }
    if (counts !== undefined)
      for (const c of counts.values())
        tel.instruments?.consumed.add(c.n, tel.attributes('process', 'process', c.topic, c.partition, this.name))
    return out
  }
}
