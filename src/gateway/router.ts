import { InvalidArgumentError, MessageTooLargeError, TwainError } from '../core/errors.js'
import type { GatewayContext } from './config/context.js'
import { checkAccess } from './auth/access.js'
import { deleteStreamRequest, headStream } from './handlers/head-delete.js'
import { errorReply, HttpStatusError, reply, type GwRequest, type GwResponse } from './transport/http.js'
import { getStream } from './handlers/get.js'
import { parseStreamName } from './stream/names.js'
import { OVERVIEW_PATHS, overviewRequest } from './overview/overview-routes.js'
import { postStream } from './handlers/post.js'
import { putStream } from './handlers/put.js'
import { isUiPath, uiRequest } from './overview/ui-assets.js'
import { serverSpan } from '../telemetry/server.js'
import { METRICS_PATH, metricsRequest } from './overview/metrics-route.js'
import type { GatewayMetricsSink } from './config/metrics-sink.js'
import { subscriptionRequest } from './subscriptions/routes.js'
import { subscriptionsOf } from './subscriptions/manager.js'

const ALLOW_METHODS = 'GET, HEAD, POST, PUT, DELETE, OPTIONS'
const EXPOSE =
  'Stream-Next-Offset, Stream-Cursor, Stream-Up-To-Date, Stream-Closed, Stream-TTL, Stream-Expires-At, Stream-SSE-Data-Encoding, Stream-Compaction, Producer-Epoch, Producer-Seq, Producer-Expected-Seq, Producer-Received-Seq, ETag, Location, Content-Type'

function corsHeaders(ctx: GatewayContext, req: GwRequest): Record<string, string> {
  const allowed = ctx.options.cors
  const origin = req.header('origin')
  if (!allowed || origin === undefined) return {}
  if (allowed !== '*' && !allowed.has(origin)) return {}
  return {
    'access-control-allow-origin': allowed === '*' ? '*' : origin,
    'access-control-expose-headers': EXPOSE,
    vary: 'Origin',
  }
}

async function route(ctx: GatewayContext, req: GwRequest): Promise<GwResponse> {
  const base = ctx.options.basePath
  const path = req.rawPath
  if (req.method === 'OPTIONS') {
    // A preflight is answered with the methods and headers the protocol uses, with or without
    // `cors`; which origins may use them is said only by access-control-allow-origin, added (by
    // `handle`) for the `cors` origins alone. Without it a browser refuses another origin's request.
    return reply(204, {
      allow: ALLOW_METHODS,
      'access-control-allow-methods': ALLOW_METHODS,
      'access-control-allow-headers': req.header('access-control-request-headers') ?? '*',
      'access-control-max-age': '600',
    })
  }
  if (OVERVIEW_PATHS.has(path)) return overviewRequest(ctx, req, path)
  const metrics = ctx.options.metrics
  if (metrics !== undefined && path === METRICS_PATH) return metricsRequest(ctx, req, metrics)
  if (ctx.options.ui !== false && isUiPath(path))
    return uiRequest(ctx.options.ui === true ? undefined : ctx.options.ui, req.method, path)
  if (!path.startsWith(`${base}/`) || path.length === base.length + 1)
    throw new HttpStatusError(404, `No stream at ${JSON.stringify(path)}: streams live at ${base}/<name>`)
  const control = `${base}/__ds`
  if (path === control || path.startsWith(`${control}/`))
    return subscriptionRequest(ctx, subscriptionsOf(ctx), req, path.slice(control.length))
  const target = parseStreamName(path.slice(base.length + 1))
  await checkAccess(ctx, req, target)
  switch (req.method) {
    case 'PUT':
      return putStream(ctx, req, target)
    case 'POST':
      return postStream(ctx, req, target)
    case 'GET':
      return getStream(ctx, req, target)
    case 'HEAD':
      return headStream(ctx, target)
    case 'DELETE':
      return deleteStreamRequest(ctx, target)
    default:
      throw new HttpStatusError(405, `Method ${req.method} is not allowed on a stream`, { allow: ALLOW_METHODS })
  }
}

/** Map a thrown error to a response (HttpStatusError as is, bad input 400, too large 413, others 500/503). */
function failure(e: unknown): GwResponse {
  if (e instanceof HttpStatusError) return errorReply(e)
  if (e instanceof MessageTooLargeError) return errorReply(new HttpStatusError(413, e.message))
  if (e instanceof InvalidArgumentError) return errorReply(new HttpStatusError(400, e.message))
  if (e instanceof TwainError && e.retriable)
    return errorReply(new HttpStatusError(503, e.message, { 'retry-after': '1' }))
  return errorReply(new HttpStatusError(500, `Internal error: ${(e as Error)?.message ?? String(e)}`))
}

/**
 * Handle one request: route it, and add the security (and CORS) headers to every answer. With
 * telemetry, inside a server span continuing the request's `traceparent`.
 */
export function handle(ctx: GatewayContext, req: GwRequest): Promise<GwResponse> {
  const tel = ctx.telemetry
  const metrics = ctx.options.metrics
  const started = metrics === undefined ? 0 : performance.now()
  const answered = tel === undefined ? answer(ctx, req) : serverSpan(tel, req, () => answer(ctx, req))
  return metrics === undefined ? answered : measured(ctx, req, metrics, started, answered)
}

const SERVED_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS'])

/** What `req` asked for, in few values (never a stream's name): the `route` of the request metrics. */
function routeOf(ctx: GatewayContext, req: GwRequest): string {
  const path = req.rawPath
  if (req.method === 'OPTIONS') return 'preflight'
  if (OVERVIEW_PATHS.has(path) || path === METRICS_PATH) return path
  if (ctx.options.ui !== false && isUiPath(path)) return 'dashboard'
  const base = ctx.options.basePath
  if (!path.startsWith(`${base}/`) || path.length === base.length + 1) return 'unmatched'
  if (path === `${base}/__ds` || path.startsWith(`${base}/__ds/`)) return 'subscriptions'
  const live = req.method === 'GET' ? req.url.searchParams.get('live') : null
  return live === 'sse' ? 'stream-sse' : live === null ? 'stream' : 'stream-long-poll'
}

/** Tell `metrics` of the request when its answer's body has ended (or the client left first). */
async function measured(
  ctx: GatewayContext,
  req: GwRequest,
  metrics: GatewayMetricsSink,
  started: number,
  answered: Promise<GwResponse>,
): Promise<GwResponse> {
  const res = await answered
  let told = false
  const tell = () => {
    if (told) return
    told = true
    metrics.observeRequest({
      route: routeOf(ctx, req),
      method: SERVED_METHODS.has(req.method) ? req.method : 'other',
      status: res.status,
      seconds: (performance.now() - started) / 1000,
    })
  }
  const stream = res.stream
  if (stream === undefined) {
    tell()
    return res
  }
  // Removed when the stream ends, as in `releasedWith`: a listener keeps a Fetch request's signal alive.
  req.signal.addEventListener('abort', tell, { once: true })
  return {
    ...res,
    stream: (sink) =>
      stream(sink).finally(() => {
        req.signal.removeEventListener('abort', tell)
        tell()
      }),
  }
}

async function answer(ctx: GatewayContext, req: GwRequest): Promise<GwResponse> {
  let res: GwResponse
  try {
    res = await route(ctx, req)
  } catch (e) {
    res = failure(e)
  }
  const cors = corsHeaders(ctx, req)
  if (cors['vary'] !== undefined && res.headers['vary'] !== undefined)
    cors['vary'] = `${res.headers['vary']}, ${cors['vary']}`
  Object.assign(
    res.headers,
    { 'x-content-type-options': 'nosniff', 'cross-origin-resource-policy': 'cross-origin' },
    cors,
  )
  if (req.method === 'HEAD') delete res.body
  return res
}
