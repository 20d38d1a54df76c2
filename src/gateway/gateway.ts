import { randomUUID } from 'node:crypto'
import { CompactionSchedule } from './stream/compaction-schedule.js'
import { setMaxListeners } from 'node:events'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { backendOf, telemetryOf } from '../facade/twain.js'
import type { Twain } from '../facade/twain.js'
import type { GatewayContext } from './config/context.js'
import { fromFetch, toFetch } from './transport/fetch-adapter.js'
import { fromNode, toNode } from './transport/node-adapter.js'
import { resolveGatewayOptions, type GatewayOptions } from './config/options.js'
import { LiveLimit } from './reads/live-limit.js'
import { closeParked } from './stream/reader-pool.js'
import { handle } from './router.js'
import { StatsHub } from './overview/stats-hub.js'
import { Subscriptions, subscriptionsOf } from './subscriptions/manager.js'
import { appendEvent } from './subscriptions/wake-events.js'

/** An HTTP gateway serving a twainmq store over the Durable Streams protocol. */
export interface Gateway {
  /** A Node `(req, res)` handler: `http.createServer(gateway.node)`, Express `app.use(gateway.node)`, … */
  readonly node: (req: IncomingMessage, res: ServerResponse) => void
  /** A Fetch handler `(Request) => Promise<Response>` (Hono, Next.js route handlers, Bun, Deno). */
  readonly fetch: (request: Request) => Promise<Response>
  /** End every open SSE and long-poll response and wait until they have ended; later requests get 503. Idempotent. */
  close(): Promise<void>
}

/**
 * Serve a `Twain`'s store over HTTP with the Durable Streams protocol: streams at
 * `<basePath>/<name>` (docs/gateway.md). The gateway does not close the `Twain`.
 * @example
 * ```ts
 * const gateway = createGateway(await open('./data'))
 * http.createServer(gateway.node).listen(4437)
 * ```
 */
export function createGateway(twain: Twain, options: GatewayOptions = {}): Gateway {
  const closing = new AbortController()
  setMaxListeners(0, closing.signal) // every open request listens for the shutdown
  const resolved = resolveGatewayOptions(options)
  const store = backendOf(twain)
  const open = new Set<Promise<void>>()
  const track = (p: Promise<unknown>) => {
    const t = p
      .then(
        () => undefined,
        () => undefined,
      )
      .finally(() => open.delete(t))
    open.add(t)
  }
  const ctx: GatewayContext = {
    store,
    options: resolved,
    clientId: `gateway-${randomUUID()}`,
    closing: closing.signal,
    access: new Map(),
    live: new LiveLimit(resolved.maxLivePerClient),
    stats: new StatsHub(store, resolved.statsIntervalMs),
    background: track,
    telemetry: telemetryOf(twain),
    subscriptions: undefined,
    compaction: new CompactionSchedule(store, resolved.compactEveryMs, (topic, e) =>
      process.emitWarning(
        `twainmq gateway: a compaction pass of "${topic}" failed: ${e instanceof Error ? e.message : String(e)}`,
      ),
    ),
  }
  if (resolved.subscriptions) {
    const subs = Subscriptions.attach(ctx, (path, event) => appendEvent(ctx, path, event), resolved.publicUrl)
    subs.start()
  }
  const detachMetrics = resolved.metrics?.attachGateway(() => ctx.live.open())
  const unavailable = () =>
    new Response('The gateway is closed\n', { status: 503, headers: { 'content-type': 'text/plain; charset=utf-8' } })
  return {
    node: (req, res) => {
      if (closing.signal.aborted) {
        res.writeHead(503, { 'content-type': 'text/plain; charset=utf-8' }).end('The gateway is closed\n')
        return
      }
      const r = fromNode(req, res, closing.signal)
      track(
        handle(ctx, r)
          .then((out) => toNode(out, r, res))
          .catch(() => void res.destroy()),
      )
    },
    fetch: async (request) => {
      if (closing.signal.aborted) return unavailable()
      const r = fromFetch(request, closing.signal)
      const answer = handle(ctx, r)
      track(answer.then(() => undefined))
      return toFetch(await answer, r, track)
    },
    close: async () => {
      closing.abort()
      subscriptionsOf(ctx)?.close()
      while (open.size > 0) await Promise.all([...open])
      await ctx.compaction.close()
      detachMetrics?.()
      closeParked(ctx.store)
    },
  }
}
