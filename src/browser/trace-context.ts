import { InvalidArgumentError } from '../core/errors.js'

/**
 * A W3C trace context, as the page's tracing library gives it (with OpenTelemetry:
 * `const c = {}; propagation.inject(context.active(), c)`): sent as the `traceparent` and
 * `tracestate` headers, so the gateway's server span continues the page's trace and the records it
 * appends carry it to the consumers that process them.
 */
export interface TraceContext {
  /** `00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>`. */
  traceparent: string
  /** Vendor entries (`key=value,…`), sent only with a `traceparent`. Default: none. */
  tracestate?: string
}

const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/
const ZERO_TRACE = /^[0-9a-f]{2}-0{32}-/
const ZERO_PARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-0{16}-/

/**
 * The headers of a trace context: none for `undefined`, else `traceparent` (and `tracestate`);
 * a malformed one is refused with `InvalidArgumentError` naming it (a gateway would ignore it,
 * and the trace would silently break).
 */
export function traceHeaders(c: TraceContext | undefined, where: string): Record<string, string> {
  if (c === undefined) return {}
  const tp = (c as Partial<TraceContext> | null)?.traceparent
  if (
    typeof tp !== 'string' ||
    !TRACEPARENT.test(tp) ||
    tp.startsWith('ff') ||
    ZERO_TRACE.test(tp) ||
    ZERO_PARENT.test(tp)
  )
    throw new InvalidArgumentError(
      `${where}: traceparent must be "00-<32 hex>-<16 hex>-<2 hex>" (lower case, ids not all zero), got ${JSON.stringify(tp)}`,
    )
  const ts = c.tracestate
  if (ts !== undefined && (typeof ts !== 'string' || !/^[\x20-\x7e]*$/.test(ts)))
    throw new InvalidArgumentError(
      `${where}: tracestate must be printable ASCII (key=value,…), got ${JSON.stringify(ts)}`,
    )
  return ts === undefined || ts === '' ? { traceparent: tp } : { traceparent: tp, tracestate: ts }
}

/** `headers` without any `traceparent` or `tracestate`, whatever the case of their names. */
export function withoutTraceHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(headers)) {
    const lower = k.toLowerCase()
    if (lower !== 'traceparent' && lower !== 'tracestate') out[k] = v
  }
  return out
}

/** The trace context `ask` gives now; a throwing `ask` is an `InvalidArgumentError` (final: a read does not retry it). */
export function askTraceContext(ask: () => TraceContext | undefined, where: string): TraceContext | undefined {
  try {
    return ask()
  } catch (e) {
    throw new InvalidArgumentError(`${where} threw: ${(e as Error)?.message ?? String(e)}`, { cause: e })
  }
}
