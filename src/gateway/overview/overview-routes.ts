import type { GatewayContext } from '../config/context.js'
import { releasedWith } from '../reads/live-limit.js'
import { HttpStatusError, reply, type GwRequest, type GwResponse, type Sink } from '../transport/http.js'
import { checkOverviewAccess, overviewFilter } from './overview-access.js'
import type { StoreOverview } from './overview.js'
import { sseEvent } from '../reads/sse-event.js'

/*
 * The read-only JSON endpoints of the store overview (docs/gateway.md, "Store overview"):
 * `GET /v1/topics`, `GET /v1/groups`, and `GET /v1/live`, an SSE stream of `snapshot` events
 * (topics and groups, with rates and lag) pushed when they change, from the gateway's sampler.
 */

export const OVERVIEW_PATHS = new Set(['/v1/topics', '/v1/groups', '/v1/live'])

/** The headers of `GET /v1/live` (and of its HEAD, which opens no live view). */
const LIVE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
}

const json = (value: unknown): GwResponse =>
  reply(
    200,
    { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' },
    `${JSON.stringify(value)}\n`,
  )

/** Resolves true when `wake` is called, false after `ms` or on abort. */
function waitFor(ms: number, signal: AbortSignal, arm: (wake: () => void) => void): Promise<boolean> {
  return new Promise((done) => {
    const finish = (woke: boolean) => {
      clearTimeout(timer)
      signal.removeEventListener('abort', onAbort)
      arm(() => undefined)
      done(woke)
    }
    const onAbort = () => finish(false)
    const timer = setTimeout(() => finish(false), ms)
    signal.addEventListener('abort', onAbort, { once: true })
    arm(() => finish(true))
  })
}

function liveResponse(ctx: GatewayContext, req: GwRequest): GwResponse {
  const filter = overviewFilter(ctx, req)
  const stream = async (sink: Sink): Promise<void> => {
    let pending: StoreOverview | Error | undefined
    let wake: () => void = () => undefined
    const unsubscribe = ctx.stats.subscribe((s) => {
      pending = s
      wake()
    })
    const endAt = Date.now() + ctx.options.sseMaxMs
    let last = ''
    try {
      while (!sink.signal.aborted) {
        const left = endAt - Date.now()
        if (left <= 0) return
        if (pending === undefined) {
          const woke = await waitFor(Math.min(left, ctx.options.longPollMs), sink.signal, (w) => (wake = w))
          if (!woke) {
            if (!sink.signal.aborted && !sink.write(': keep-alive\n\n')) return
            continue
          }
        }
        const s = pending
        pending = undefined
        if (s === undefined) continue
        let text: string
        if (s instanceof Error) text = sseEvent('error', JSON.stringify({ message: s.message }))
        else {
          const shown = await filter.apply(s)
          const key = JSON.stringify({ ...shown, at: 0 })
          if (key === last) continue
          last = key
          text = sseEvent('snapshot', JSON.stringify(shown))
        }
        if (!sink.write(text)) return
        await sink.drained()
      }
    } finally {
      unsubscribe()
    }
  }
  return {
    status: 200,
    headers: { ...LIVE_HEADERS },
    stream,
  }
}

/** Answer a request for one of {@link OVERVIEW_PATHS}. */
export async function overviewRequest(ctx: GatewayContext, req: GwRequest, path: string): Promise<GwResponse> {
  if (req.method !== 'GET' && req.method !== 'HEAD')
    throw new HttpStatusError(405, `Method ${req.method} is not allowed on ${path} (read-only)`, {
      allow: 'GET, HEAD, OPTIONS',
    })
  checkOverviewAccess(ctx, req)
  if (path === '/v1/live') {
    // HEAD: the headers of the live view, without opening one (no slot, no sampler, no stream).
    if (req.method === 'HEAD') return reply(200, { ...LIVE_HEADERS })
    const release = ctx.live.enter(
      ctx.options.clientKey ? ctx.options.clientKey(req) : (req.principal ?? req.clientAddress),
      'overview',
    )
    return releasedWith(liveResponse(ctx, req), release, req.signal)
  }
  const shown = await overviewFilter(ctx, req).apply(await ctx.stats.sample())
  return path === '/v1/topics'
    ? json({ at: shown.at, topics: shown.topics })
    : json({ at: shown.at, groups: shown.groups })
}
