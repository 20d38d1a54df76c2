import { isJson } from '../transport/content.js'
import type { GatewayContext } from '../config/context.js'
import { responseCursor } from '../stream/cursor.js'
import { HttpStatusError, reply, type GwRequest, type GwResponse } from '../transport/http.js'
import type { StreamTarget } from '../stream/names.js'
import { atTail, positionOf, tokenOf, type PageResult, type Position } from '../reads/read.js'
import { catchUpPage } from '../reads/read-ahead.js'
import { sharedRead } from '../reads/shared-read.js'
import { sseResponse } from '../reads/sse.js'
import { liveView } from '../stream/live-view.js'
import { releasedWith } from '../reads/live-limit.js'
import type { StreamView } from '../stream/stream-view.js'
import { PartitionWake } from '../reads/partition-wake.js'

const CATCH_UP_CACHE = 'public, max-age=60, stale-while-revalidate=300'
/**
 * With auth, a catch-up answer is for its token only: `private` (no shared cache may keep it) and
 * `Vary: Authorization` (a browser's own cache must not answer another token's request with it,
 * which would hand a token without access the data, and hide the 403).
 */
const GUARDED_CACHE = { 'cache-control': 'private, max-age=60, stale-while-revalidate=300', vary: 'Authorization' }
/**
 * A catch-up answer at the tail of an open stream is what the next append changes: a cache keeping
 * it would answer a read after a write with the page from before it (a browser did, for 60 s). It
 * may be stored but must be asked again each time, which its ETag turns into a 304 while the tail
 * has not moved. Full pages, and the last page of a closed stream, never change: cached as above.
 */
const AT_TAIL_CACHE = { 'cache-control': 'public, no-cache' }
const GUARDED_AT_TAIL_CACHE = { 'cache-control': 'private, no-cache', vary: 'Authorization' }

function cacheHeaders(ctx: GatewayContext, v: StreamView, r: PageResult): Record<string, string> {
  const changes = r.upToDate && v.state.closedAt === undefined
  if (guarded(ctx)) return changes ? GUARDED_AT_TAIL_CACHE : GUARDED_CACHE
  return changes ? AT_TAIL_CACHE : { 'cache-control': CATCH_UP_CACHE }
}

/** The one `offset` query parameter (400 when repeated or empty); `-1` when absent. */
function offsetParam(req: GwRequest, live: boolean): string {
  const all = req.url.searchParams.getAll('offset')
  if (all.length > 1) throw new HttpStatusError(400, 'Send one offset parameter')
  if (all.length === 0 && live)
    throw new HttpStatusError(400, 'Live reads need an offset (use -1 for the start or now for the tail)')
  const raw = all[0] ?? '-1'
  if (raw === '') throw new HttpStatusError(400, 'The offset parameter is empty')
  return raw
}

function dataReply(v: StreamView, from: Position, r: PageResult, extra: Record<string, string>): GwResponse {
  const h: Record<string, string> = {
    'content-type': v.contentType,
    'stream-next-offset': tokenOf(v, r.next),
    ...extra,
  }
  if (r.upToDate) h['stream-up-to-date'] = 'true'
  if (r.upToDate && v.state.closedAt !== undefined) h['stream-closed'] = 'true'
  h.etag = `"${tokenOf(v, from)}:${tokenOf(v, r.next)}${h['stream-closed'] ? ':c' : ''}"`
  return reply(200, h, r.body)
}

/** Whether requests carry credentials (then catch-up answers are private to them). */
const guarded = (ctx: GatewayContext): boolean => ctx.options.auth !== undefined || ctx.options.authorize !== undefined

/** GET: catch-up, long-poll or SSE read. */
export async function getStream(ctx: GatewayContext, req: GwRequest, target: StreamTarget): Promise<GwResponse> {
  const live = req.url.searchParams.get('live')
  if (live !== null && live !== 'long-poll' && live !== 'sse')
    throw new HttpStatusError(400, `Unknown live mode ${JSON.stringify(live)}: use long-poll or sse`)
  const raw = offsetParam(req, live !== null)
  let v = await liveView(ctx, target, true)
  let from = positionOf(v, raw)
  const cursor = req.url.searchParams.get('cursor') ?? undefined
  if (live === null) {
    if (raw === 'now') {
      const h: Record<string, string> = {
        'content-type': v.contentType,
        'stream-next-offset': tokenOf(v, from),
        'stream-up-to-date': 'true',
        'cache-control': 'no-store',
      }
      if (v.state.closedAt !== undefined) h['stream-closed'] = 'true'
      return reply(200, h, isJson(v.contentType) ? '[]' : '')
    }
    const page = await catchUpPage(ctx, v, from, ctx.options.maxReadBytes)
    const r = dataReply(v, from, page, cacheHeaders(ctx, v, page))
    if (req.header('if-none-match') === r.headers.etag)
      return reply(304, { etag: r.headers.etag!, 'stream-next-offset': r.headers['stream-next-offset']! })
    return r
  }
  const key = ctx.options.clientKey ? ctx.options.clientKey(req) : (req.principal ?? req.clientAddress)
  const release = ctx.live.enter(key, live === 'sse' ? 'sse' : 'long-poll')
  if (live === 'sse') return releasedWith(sseResponse(ctx, v, from, cursor), release, req.signal)
  // Long-poll: answer at once when there is data (or the stream is closed at the tail), else wait.
  // The watch is made inside the `try`: a store closing now must not keep the slot taken.
  let wake: PartitionWake | undefined
  const deadline = Date.now() + ctx.options.longPollMs
  try {
    wake = new PartitionWake(ctx.store, target.topic, target.partition)
    // Look again now that the watch is in place: a record appended after `v` was read and before
    // the watch existed brought no wake-up for it (a watch joining another's gets none of its own).
    v = await liveView(ctx, target, false)
    for (;;) {
      if (!atTail(v, from)) {
        const shared = await sharedRead(ctx, v, from)
        return dataReply(v, from, shared.result, { 'stream-cursor': responseCursor(cursor) })
      }
      const h: Record<string, string> = { 'stream-next-offset': tokenOf(v, from), 'stream-up-to-date': 'true' }
      if (v.state.closedAt !== undefined) return reply(204, { ...h, 'stream-closed': 'true' })
      const left = deadline - Date.now()
      if (left <= 0 || !(await wake.wait(left, req.signal))) {
        if (req.signal.aborted) return reply(204, h)
        if (Date.now() >= deadline) return reply(204, { ...h, 'stream-cursor': responseCursor(cursor) })
      }
      v = await liveView(ctx, target, false)
    }
  } finally {
    wake?.close()
    release()
  }
}
