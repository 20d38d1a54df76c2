import { isJson, isTextual } from '../transport/content.js'
import type { GatewayContext } from '../config/context.js'
import { perStore } from '../stream/per-store.js'
import { readPage, type PageResult, type Position } from './read.js'
import { sseEvent } from './sse-event.js'
import { accessKey, type StreamView } from '../stream/stream-view.js'

/** A read shared by live readers: its result (with the response body) and SSE `data` event (`''` when there is nothing to send), encoded once on first use. */
export interface SharedRead {
  result: PageResult
  event(): string
}

/** How long a finished read stays shared: readers woken by one append ask within this. */
const KEEP_MS = 100

const reads = perStore<{ key: string; read: Promise<SharedRead> }>()

function shared(v: StreamView, result: PageResult): SharedRead {
  let event: string | undefined
  const eventOf = () => {
    if (result.count === 0 && !isJson(v.contentType)) return ''
    return sseEvent('data', isTextual(v.contentType) ? result.body.toString('utf8') : result.body.toString('base64'))
  }
  return { result, event: () => (event ??= eventOf()) }
}

/**
 * The data from `from` up to the view's tail for a live (SSE or long-poll) response. Every live reader of a stream at
 * the same position of the same view (all of them, after one append wakes them) gets the same read
 * and the same encoded event: one read and one encode per stream per wake-up, not one per reader.
 */
export function sharedRead(ctx: GatewayContext, v: StreamView, from: Position): Promise<SharedRead> {
  const all = reads(ctx.store)
  const stream = accessKey(v)
  const key = `${from.seg}:${from.offset}|${v.tail}|${v.chain.length}`
  const hit = all.get(stream)
  if (hit?.key === key) return hit.read
  const read = readPage(ctx, v, from, ctx.options.maxReadBytes).then((result) => shared(v, result))
  const entry = { key, read }
  all.set(stream, entry)
  const forget = () => {
    setTimeout(() => {
      if (all.get(stream) === entry) all.delete(stream)
    }, KEEP_MS).unref()
  }
  read.then(forget, () => {
    if (all.get(stream) === entry) all.delete(stream)
  })
  return read
}
