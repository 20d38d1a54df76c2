import type { SpanContext } from '@opentelemetry/api'
import * as A from './attributes.js'
import type { InstanceTelemetry } from './hooks.js'
import type { Telemetry } from './telemetry.js'

/** What the server span reads of an HTTP request. */
export interface ServedRequest {
  readonly method: string
  readonly rawPath: string
  header(name: string): string | undefined
}

/** The context each request's records carry as their creation context (its server span's). */
const contexts = new WeakMap<ServedRequest, SpanContext>()

/** The trace context the records appended by `req` carry: its server span's, or the caller's (`traceparent`). */
export function requestContext(req: ServedRequest): SpanContext | undefined {
  return contexts.get(req)
}

/**
 * Run `handle` for an HTTP request inside a SERVER span (HTTP conventions: named after the method,
 * `http.request.method`, `url.path`, `http.response.status_code`; an error status from 500 on), a
 * child of the request's W3C `traceparent` when it has one. Records the request appends carry the
 * span's context (`requestContext`); with traces off, the request's own context when propagated.
 */
export async function serverSpan<T extends { status: number }>(
  instance: InstanceTelemetry,
  req: ServedRequest,
  handle: () => Promise<T>,
): Promise<T> {
  const tel = instance as Telemetry // the only implementation
  const api = tel.api
  const tp = req.header(A.TRACEPARENT)
  const ts = req.header(A.TRACESTATE)
  const remote =
    tp === undefined
      ? undefined
      : tel.contextOf(ts === undefined ? { [A.TRACEPARENT]: tp } : { [A.TRACEPARENT]: tp, [A.TRACESTATE]: ts })
  const parent = remote === undefined ? api.ROOT_CONTEXT : api.trace.setSpanContext(api.ROOT_CONTEXT, remote)
  const tracer = tel.tracer
  if (tracer === undefined) {
    if (remote !== undefined && tel.propagate) contexts.set(req, remote)
    return api.context.with(parent, handle)
  }
  const span = tracer.startSpan(
    req.method,
    {
      kind: api.SpanKind.SERVER,
      attributes: { 'http.request.method': req.method, 'url.path': req.rawPath },
    },
    parent,
  )
  // A tracer that records nothing (the API without an SDK) gives a span of no trace when the
  // request has no traceparent: records carry no context then, rather than an all-zero one.
  const own = span.spanContext()
  if (tel.propagate && api.trace.isSpanContextValid(own)) contexts.set(req, own)
  try {
    const res = await api.context.with(api.trace.setSpan(parent, span), handle)
    span.setAttribute('http.response.status_code', res.status)
    if (res.status >= 500) {
      span.setAttribute(A.ERROR_TYPE, String(res.status))
      span.setStatus({ code: api.SpanStatusCode.ERROR })
    }
    return res
  } catch (e) {
    span.setAttribute(A.ERROR_TYPE, A.errorType(e))
    span.setStatus({ code: api.SpanStatusCode.ERROR, message: (e as Error)?.message ?? String(e) })
    throw e
  } finally {
    span.end()
  }
}
