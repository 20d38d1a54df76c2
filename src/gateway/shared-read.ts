import { bodyOf, isJson, isTextual } from './content.js'
import type { GatewayContext } from './context.js'
import { perStore } from './per-store.js'
import { readFrom, type Position, type ReadResult } from './read.js'
import { sseEvent } from './sse-event.js'
import { accessKey, type StreamView } from './stream-view.js'

/** A read shared by live readers: its result, response body and SSE `data` event (`''` when there is nothing to send), each encoded once on first use. */
export interface SharedRead {
  result: ReadResult
  body(): Buffer
  event(): string
}

/** How long a finished read stays shared: readers woken by one append ask within this. */
const KEEP_MS = 100

const reads = perStore<{ key: string; read: Promise<SharedRead> }>()

function shared(v: StreamView, result: ReadResult): SharedRead {
  let body: Buffer | undefined
  let event: string | undefined
  const bodyOnce = () => (body ??= bodyOf(v.contentType, result.messages))
  const eventOf = () => {
    if (result.messages.length === 0 && !isJson(v.contentType)) return ''
    return sseEvent('data', isTextual(v.contentType) ? bodyOnce().toString('utf8') : bodyOnce().toString('base64'))
  }
  return { result, body: bodyOnce, event: () => (event ??= eventOf()) }
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
  const read = readFrom(ctx, v, from, ctx.options.maxReadBytes).then((result) => shared(v, result))
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
