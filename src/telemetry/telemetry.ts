import type {
  Attributes,
  Counter,
  Histogram,
  Link,
  Meter,
  MeterProvider,
  SpanContext,
  Tracer,
  TracerProvider,
} from '@opentelemetry/api'
import { InvalidArgumentError } from '../core/errors.js'
import { checkKnownKeys } from '../core/names.js'
import type { TelemetryOptions } from '../core/types.js'
import * as A from './attributes.js'
import type { InstanceTelemetry } from './hooks.js'
import { loadOtel, type Otel } from './load.js'

const SCOPE = 'twainmq'
/** Most links a batch's span carries (the SDK's default span limit). */
export const MAX_LINKS = 128

/** The instruments of one instance, and the attribute sets they record with (made once each). */
export interface Instruments {
  readonly meter: Meter
  readonly sent: Counter
  readonly consumed: Counter
  readonly operationDuration: Histogram
  readonly processDuration: Histogram
}

const HEX = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/

function checkFlag(name: string, v: unknown): boolean {
  if (v === undefined) return true
  if (typeof v !== 'boolean')
    throw new InvalidArgumentError(`telemetry.${name} must be a boolean, got ${JSON.stringify(v)}`)
  return v
}

function checkProvider(name: string, v: unknown, method: string): void {
  if (v === undefined) return
  if (v === null || typeof v !== 'object' || typeof (v as Record<string, unknown>)[method] !== 'function')
    throw new InvalidArgumentError(`telemetry.${name} must be an object with a ${method}() method, got ${String(v)}`)
}

/**
 * An instance's telemetry: the OpenTelemetry API (when the application has it), its tracer and
 * instruments as `open({ telemetry })` asked, and the W3C trace context a message's headers carry.
 * An instance without telemetry has none of this object: every caller checks for `undefined` once.
 */
export class Telemetry implements InstanceTelemetry {
  /** Spans are recorded (`telemetry.traces`). */
  readonly tracer: Tracer | undefined
  /** Sends inside a span store its context in their headers, unless a producer says otherwise. */
  readonly propagate: boolean
  readonly instruments: Instruments | undefined
  /** Process spans also for messages that carry no trace context (`telemetry.rootSpans`). */
  readonly rootSpans: boolean
  /** `messaging.process.duration` is recorded for every message (`telemetry.processDuration`). */
  readonly processDuration: boolean
  readonly #attrs = new Map<string, Attributes>()
  /** The headers of the last context stamped on a send without headers (sends in one span share them). */
  #lastContext: SpanContext | undefined
  #lastHeaders: Record<string, string> | undefined

  private constructor(
    readonly api: Otel,
    options: TelemetryOptions,
    traces: boolean,
    metrics: boolean,
  ) {
    this.propagate = options.propagate !== false
    this.rootSpans = options.rootSpans === true
    this.processDuration = options.processDuration === true
    const tp = (options.tracerProvider as TracerProvider | undefined) ?? api.trace.getTracerProvider()
    this.tracer = traces ? tp.getTracer(SCOPE) : undefined
    if (metrics) {
      const mp = (options.meterProvider as MeterProvider | undefined) ?? api.metrics.getMeterProvider()
      const meter = mp.getMeter(SCOPE)
      this.instruments = {
        meter,
        sent: meter.createCounter(A.SENT_MESSAGES, { unit: '{message}', description: 'Messages sent' }),
        consumed: meter.createCounter(A.CONSUMED_MESSAGES, {
          unit: '{message}',
          description: 'Messages handed to the application by consumer groups and processors',
        }),
        operationDuration: meter.createHistogram(A.OPERATION_DURATION, {
          unit: 's',
          description: 'Duration of messaging operations (send, commit)',
        }),
        processDuration: meter.createHistogram(A.PROCESS_DURATION, {
          unit: 's',
          description: 'Time from handing a message to the application to its settlement',
        }),
      }
    }
  }

  /**
   * The telemetry `open()` asked for (options checked: `InvalidArgumentError`), or undefined when
   * it asked for none or the application does not have `@opentelemetry/api`.
   */
  static async open(options: TelemetryOptions | false | undefined): Promise<Telemetry | undefined> {
    if (options === false) return undefined
    if (options !== undefined && (options === null || typeof options !== 'object' || Array.isArray(options)))
      throw new InvalidArgumentError(`telemetry must be an object or false, got ${JSON.stringify(options)}`)
    const o = options ?? {}
    checkKnownKeys('telemetry', o, [
      'traces',
      'propagate',
      'metrics',
      'rootSpans',
      'processDuration',
      'tracerProvider',
      'meterProvider',
    ])
    const traces = checkFlag('traces', o.traces)
    const propagate = checkFlag('propagate', o.propagate)
    const metrics = checkFlag('metrics', o.metrics)
    if (o.rootSpans !== undefined) checkFlag('rootSpans', o.rootSpans)
    if (o.processDuration !== undefined) checkFlag('processDuration', o.processDuration)
    checkProvider('tracerProvider', o.tracerProvider, 'getTracer')
    checkProvider('meterProvider', o.meterProvider, 'getMeter')
    if (!traces && !propagate && !metrics) return undefined
    const api = await loadOtel()
    return api === undefined ? undefined : new Telemetry(api, o, traces, metrics)
  }

  /** Whether sends are traced or counted (the store's appends are wrapped). */
  get wrapsStore(): boolean {
    return this.tracer !== undefined || this.instruments !== undefined
  }

  /** The active span's context, when there is a valid one. */
  activeContext(): SpanContext | undefined {
    const api = this.api
    const sc = api.trace.getSpanContext(api.context.active())
    return sc !== undefined && api.trace.isSpanContextValid(sc) ? sc : undefined
  }

  /**
   * `headers` (not changed) with `sc` added as `traceparent` (and `tracestate`): a new object.
   * Headers that are not an object are returned as they are, for the send to refuse them.
   */
  withContext(headers: Record<string, string> | undefined, sc: SpanContext): Record<string, string> {
    if (headers !== undefined && (headers === null || typeof headers !== 'object' || Array.isArray(headers)))
      return headers
    if (headers === undefined && sc === this.#lastContext) return this.#lastHeaders as Record<string, string>
    const out: Record<string, string> = { ...headers }
    out[A.TRACEPARENT] = traceparent(sc)
    const state = sc.traceState?.serialize()
    if (state) out[A.TRACESTATE] = state
    else delete out[A.TRACESTATE]
    if (headers === undefined) {
      this.#lastContext = sc
      this.#lastHeaders = out
    }
    return out
  }

  /** The creation context a message's headers carry (W3C `traceparent`), if valid. */
  contextOf(headers: Record<string, string> | undefined): SpanContext | undefined {
    const tp = headers?.[A.TRACEPARENT]
    if (tp === undefined) return undefined
    const m = HEX.exec(tp.trim().toLowerCase())
    if (m === null || m[1] === 'ff' || (m[1] === '00' && m[5] !== undefined)) return undefined
    const sc: SpanContext = {
      traceId: m[2] as string,
      spanId: m[3] as string,
      traceFlags: parseInt(m[4] as string, 16) & 1,
      isRemote: true,
    }
    if (!this.api.trace.isSpanContextValid(sc)) return undefined
    const state = headers?.[A.TRACESTATE]
    if (state) sc.traceState = this.api.createTraceState(state)
    return sc
  }

  /** Links to the creation contexts of up to `MAX_LINKS` records (those whose headers carry one). */
  linksOf(records: readonly { headers?: Record<string, string> | undefined }[]): Link[] | undefined {
    let links: Link[] | undefined
    for (let i = 0; i < records.length; i++) {
      const h = records[i]?.headers
      if (h === undefined || h[A.TRACEPARENT] === undefined) continue
      const sc = this.contextOf(h)
      if (sc === undefined) continue
      ;(links ??= []).push({ context: sc })
      if (links.length === MAX_LINKS) break
    }
    return links
  }

  /**
   * The metric attributes of an operation on a partition (made once per distinct set): the
   * system, the operation, the destination and partition, the group, and `error.type` on failure.
   */
  attributes(
    operation: string,
    type: string,
    topic: string,
    partition: number,
    group?: string,
    error?: string,
  ): Attributes {
    const key = `${operation}\0${topic}\0${partition}\0${group ?? ''}\0${error ?? ''}`
    let a = this.#attrs.get(key)
    if (a === undefined) {
      a = {
        [A.SYSTEM]: A.SYSTEM_NAME,
        [A.OPERATION_NAME]: operation,
        [A.OPERATION_TYPE]: type,
        [A.DESTINATION]: topic,
        [A.PARTITION]: String(partition),
      }
      if (group !== undefined) a[A.GROUP] = group
      if (error !== undefined) a[A.ERROR_TYPE] = error
      this.#attrs.set(key, a)
    }
    return a
  }
}

/** The W3C `traceparent` of a span context. */
export function traceparent(sc: SpanContext): string {
  return `00-${sc.traceId}-${sc.spanId}-${(sc.traceFlags & 0xff).toString(16).padStart(2, '0')}`
}
