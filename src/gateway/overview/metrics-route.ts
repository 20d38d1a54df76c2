import { refused } from '../auth/access.js'
import type { GatewayContext } from '../config/context.js'
import type { GatewayMetricsSink } from '../config/metrics-sink.js'
import { HttpStatusError, reply, type GwRequest, type GwResponse } from '../transport/http.js'

/** Where a gateway with `metrics` serves their exposition (whatever `basePath` is). */
export const METRICS_PATH = '/metrics'

/**
 * Answer `GET /metrics` with the exposition of the gateway's `metrics`. Its figures name every
 * topic and group, so with `auth` only a token that reads every stream (`read: ["*"]`) gets it,
 * and an `authorize` hook is asked with the stream name `/metrics` (no stream has a `/`).
 */
export async function metricsRequest(
  ctx: GatewayContext,
  req: GwRequest,
  sink: GatewayMetricsSink,
): Promise<GwResponse> {
  if (req.method !== 'GET' && req.method !== 'HEAD')
    throw new HttpStatusError(405, `Method ${req.method} is not allowed on ${METRICS_PATH} (read-only)`, {
      allow: 'GET, HEAD, OPTIONS',
    })
  const { auth, authorize } = ctx.options
  if (auth) {
    const d = auth.checkReadsAll(req.header('authorization'))
    if (!d.allowed) throw refused(d)
    req.principal = d.principal
  }
  if (authorize && (await authorize(req, METRICS_PATH, 'read')) !== true)
    throw new HttpStatusError(403, `Not allowed: the authorize hook refused ${METRICS_PATH}`)
  const { contentType, body } = await sink.exposition()
  return reply(200, { 'content-type': contentType, 'cache-control': 'no-store' }, body)
}
