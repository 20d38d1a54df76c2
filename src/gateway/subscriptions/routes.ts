import type { GatewayContext } from '../config/context.js'
import { checkOne, refused } from '../auth/access.js'
import { parseStreamName } from '../stream/names.js'
import { HttpStatusError, reply, type GwRequest, type GwResponse } from '../transport/http.js'
import type { GatewayOperation } from '../auth/auth-tokens.js'
import { streamPath, SubscriptionError } from './definition.js'
import type { Subscriptions } from './manager.js'

/** Largest body of a subscription request. */
const MAX_BODY = 256 * 1024
const ID_RE = /^[A-Za-z0-9_.:~-]{1,200}$/

const json = (status: number, body: unknown, headers: Record<string, string> = {}): GwResponse =>
  reply(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers }, JSON.stringify(body))

const failed = (e: SubscriptionError): GwResponse =>
  json(e.status, { error: { code: e.code, message: e.message, ...e.extra } }, e.headers)

async function bodyOf(req: GwRequest): Promise<Record<string, unknown>> {
  const raw = (await req.body(MAX_BODY)).toString('utf8')
  if (raw.trim() === '') return {}
  let body: unknown
  try {
    body = JSON.parse(raw) as unknown
  } catch {
    throw new SubscriptionError('INVALID_REQUEST', 'The body is not JSON')
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw new SubscriptionError('INVALID_REQUEST', `The body must be a JSON object, got ${raw.slice(0, 100)}`)
  return body as Record<string, unknown>
}

function bearer(req: GwRequest): string {
  const h = req.header('authorization')
  if (h === undefined || !h.startsWith('Bearer ') || h.length === 7)
    throw new SubscriptionError('TOKEN_INVALID', 'This route needs the wake’s token: Authorization: Bearer <token>')
  return h.slice(7)
}

/**
 * With `auth`, managing subscriptions and claiming wakes needs a token that may read every stream;
 * an `authorize` hook is asked too, with the name `__ds/subscriptions/<id>` (no stream has it).
 */
async function checkManager(ctx: GatewayContext, req: GwRequest, id: string, op: GatewayOperation): Promise<void> {
  const { auth, authorize } = ctx.options
  if (auth !== undefined) {
    const d = auth.checkReadsAll(req.header('authorization'))
    if (!d.allowed) throw refused(d)
    req.principal = d.principal
  }
  const name = `__ds/subscriptions/${id}`
  if (authorize !== undefined && (await authorize(req, name, op)) !== true)
    throw new HttpStatusError(403, `Not allowed: the authorize hook refused ${op} of ${name}`)
}

/** A pull-wake subscription appends to its wake stream: its creator must be allowed to. */
async function checkWakeStream(ctx: GatewayContext, req: GwRequest, body: Record<string, unknown>): Promise<void> {
  if (body.type !== 'pull-wake' || typeof body.wake_stream !== 'string') return
  const stream = streamPath(body.wake_stream, 'wake_stream')
  if (ctx.options.auth !== undefined || ctx.options.authorize !== undefined)
    await checkOne(ctx, req, parseStreamName(stream), 'append')
}

const notAllowed = (method: string, allow: string): SubscriptionError =>
  new SubscriptionError('METHOD_NOT_ALLOWED', `${method} is not allowed here (allowed: ${allow})`, {}, { allow })

/**
 * The `__ds` control routes of the Durable Streams protocol under the base path: `jwks.json` (the
 * webhook signing keys) and `subscriptions/<id>` with `/streams`, `/streams/<path>`, `/callback`,
 * `/claim`, `/ack` and `/release`. Errors are JSON: `{ "error": { "code", "message" } }`.
 * `rest` is the raw path after `<basePath>/__ds`.
 */
export async function subscriptionRequest(
  ctx: GatewayContext,
  subs: Subscriptions | undefined,
  req: GwRequest,
  rest: string,
): Promise<GwResponse> {
  try {
    if (subs === undefined)
      throw new SubscriptionError(
        'SUBSCRIPTION_NOT_FOUND',
        'Subscriptions are off on this gateway (createGateway(twain, { subscriptions: true }), twainmq serve --subscriptions)',
      )
    return await route(ctx, subs, req, rest)
  } catch (e) {
    if (e instanceof SubscriptionError) return failed(e)
    if (e instanceof HttpStatusError && (e.status === 401 || e.status === 403 || e.status === 413))
      return json(
        e.status,
        { error: { code: e.status === 413 ? 'INVALID_REQUEST' : 'UNAUTHORIZED', message: e.message } },
        e.headers,
      )
    throw e
  }
}

async function route(ctx: GatewayContext, subs: Subscriptions, req: GwRequest, rest: string): Promise<GwResponse> {
  const m = req.method
  if (rest === '/jwks.json') {
    if (m !== 'GET') throw notAllowed(m, 'GET')
    return reply(
      200,
      { 'content-type': 'application/jwk-set+json', 'cache-control': 'public, max-age=300' },
      JSON.stringify({ keys: [subs.keys.jwk] }),
    )
  }
  const parts = rest.startsWith('/subscriptions/') ? rest.slice('/subscriptions/'.length).split('/') : []
  let id: string
  try {
    id = decodeURIComponent(parts[0] ?? '')
  } catch {
    throw new SubscriptionError(
      'INVALID_REQUEST',
      `The subscription id in ${JSON.stringify(rest)} is not valid percent-encoding`,
    )
  }
  if (parts.length === 0 || id === '')
    throw new SubscriptionError('SUBSCRIPTION_NOT_FOUND', `No control route ${JSON.stringify(rest)}`)
  if (!ID_RE.test(id))
    throw new SubscriptionError(
      'INVALID_REQUEST',
      `A subscription id is 1-200 of A-Z a-z 0-9 _ . : ~ -, got ${JSON.stringify(id)}`,
    )
  const action = parts.length === 1 ? '' : (parts[1] as string)
  if (parts.length === 1) {
    if (m === 'PUT') {
      await checkManager(ctx, req, id, 'create')
      const body = await bodyOf(req)
      await checkWakeStream(ctx, req, body)
      const { created, sub } = await subs.put(id, body, req.url.origin)
      return json(created ? 201 : 200, subs.view(sub))
    }
    if (m === 'GET') {
      await checkManager(ctx, req, id, 'read')
      return json(200, subs.view(await subs.get(id)))
    }
    if (m === 'DELETE') {
      await checkManager(ctx, req, id, 'delete')
      await subs.delete(id)
      return reply(204)
    }
    throw notAllowed(m, 'GET, PUT, DELETE')
  }
  if (action === 'streams') {
    await checkManager(ctx, req, id, 'create')
    if (parts.length === 2) {
      if (m !== 'POST') throw notAllowed(m, 'POST')
      await subs.addStreams(id, (await bodyOf(req)).streams)
      return reply(204)
    }
    if (m !== 'DELETE') throw notAllowed(m, 'DELETE')
    let path: string
    try {
      path = decodeURIComponent(parts.slice(2).join('/'))
    } catch {
      throw new SubscriptionError(
        'INVALID_REQUEST',
        `The stream path in ${JSON.stringify(rest)} is not valid percent-encoding`,
      )
    }
    await subs.removeStream(id, path)
    return reply(204)
  }
  if (parts.length === 2 && ['callback', 'claim', 'ack', 'release'].includes(action)) {
    if (m !== 'POST') throw notAllowed(m, 'POST')
    if (action === 'claim') {
      await checkManager(ctx, req, id, 'read')
      return json(200, await subs.claim(id, (await bodyOf(req)).worker))
    }
    const token = bearer(req)
    const body = await bodyOf(req)
    if (action === 'callback') return json(200, await subs.callback(id, token, body))
    if (action === 'ack') return json(200, await subs.ack(id, token, body))
    await subs.release(id, token, body)
    return reply(204)
  }
  throw new SubscriptionError('SUBSCRIPTION_NOT_FOUND', `No control route ${JSON.stringify(rest)}`)
}
