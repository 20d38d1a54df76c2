import type { GatewayContext } from '../config/context.js'
import type { GatewayOperation } from './auth-tokens.js'
import { HttpStatusError, type GwRequest } from '../transport/http.js'
import { parseStreamName, type StreamTarget } from '../stream/names.js'

/** The operation a request method performs on a stream. */
export function operationOf(method: string): GatewayOperation {
  return method === 'PUT' ? 'create' : method === 'POST' ? 'append' : method === 'DELETE' ? 'delete' : 'read'
}

/** The answer to a request the token check refused: 401 (with `WWW-Authenticate: Bearer`) or 403, naming why. */
export function refused(d: { status: 401 | 403; reason: string }): HttpStatusError {
  return new HttpStatusError(
    d.status,
    `Not allowed: ${d.reason}`,
    d.status === 401 ? { 'www-authenticate': 'Bearer' } : {},
  )
}

/** Refuse the request (401/403) unless the token grants and the hook allow `op` on `target`. */
export async function checkOne(
  ctx: GatewayContext,
  req: GwRequest,
  target: StreamTarget,
  op: GatewayOperation,
): Promise<void> {
  const { auth, authorize } = ctx.options
  if (auth) {
    const d = auth.check(req.header('authorization'), target.name, op)
    if (!d.allowed) throw refused(d)
    req.principal = d.principal
  }
  if (authorize && !(await authorize(req, target.name, op)))
    throw new HttpStatusError(403, `Not allowed: ${op} of stream "${target.name}" was refused`)
}

/**
 * The access checks of a stream request: its own operation, and for a fork (`Stream-Forked-From`)
 * a read of the source too, so a fork cannot copy a stream its creator may not read.
 */
export async function checkAccess(ctx: GatewayContext, req: GwRequest, target: StreamTarget): Promise<void> {
  if (!ctx.options.auth && !ctx.options.authorize) return
  await checkOne(ctx, req, target, operationOf(req.method))
  const from = req.method === 'PUT' ? req.header('stream-forked-from') : undefined
  const base = `${ctx.options.basePath}/`
  if (from?.startsWith(base)) {
    let source: StreamTarget | undefined
    try {
      source = parseStreamName(from.slice(base.length))
    } catch {
      return // the PUT itself refuses a malformed source
    }
    await checkOne(ctx, req, source, 'read')
  }
}
