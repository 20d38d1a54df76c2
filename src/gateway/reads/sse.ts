import { isTextual } from '../transport/content.js'
import type { GatewayContext } from '../config/context.js'
import { responseCursor } from '../stream/cursor.js'
import type { GwResponse, Sink } from '../transport/http.js'
import { liveView } from '../stream/live-view.js'
import { atTail, tokenOf, type Position } from './read.js'
import { sharedRead } from './shared-read.js'
import { sseEvent } from './sse-event.js'
import type { StreamView } from '../stream/stream-view.js'
import { PartitionWake } from './partition-wake.js'

function control(
  v: StreamView,
  next: Position,
  upToDate: boolean,
  cursor: string | undefined,
): { text: string; cursor: string | undefined } {
  const c: Record<string, unknown> = { streamNextOffset: tokenOf(v, next) }
  const closed = upToDate && v.state.closedAt !== undefined
  let sent = cursor
  if (!closed) {
    sent = responseCursor(cursor)
    c.streamCursor = sent
  }
  if (upToDate) c.upToDate = true
  if (closed) c.streamClosed = true
  return { text: sseEvent('control', JSON.stringify(c)), cursor: sent }
}

/**
 * An SSE read: each batch of data is one `data` event followed by a `control` event; at the tail it
 * waits on a watch of the stream's own partition, sends a keep-alive control every `longPollMs`,
 * ends after the closed control, after `sseMaxMs`, when the client goes or the gateway closes.
 */
export function sseResponse(
  ctx: GatewayContext,
  first: StreamView,
  start: Position,
  clientCursor: string | undefined,
): GwResponse {
  const headers: Record<string, string> = {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  }
  if (!isTextual(first.contentType)) headers['stream-sse-data-encoding'] = 'base64'
  const stream = async (sink: Sink): Promise<void> => {
    const wake = new PartitionWake(ctx.store, first.target.topic, first.target.partition)
    const endAt = Date.now() + ctx.options.sseMaxMs
    let v = first
    try {
      // Look again now that the watch is in place: a record appended after `first` was read and
      // before the watch existed brought no wake-up for it.
      v = await liveView(ctx, first.target, false)
    } catch {
      wake.close()
      return // deleted or expired meanwhile: the client's next request gets the status
    }
    let pos = start
    let cursor = clientCursor
    let announced = false
    try {
      while (!sink.signal.aborted) {
        if (!atTail(v, pos) || !announced || v.state.closedAt !== undefined) {
          let out = ''
          let upToDate = atTail(v, pos)
          if (!upToDate) {
            const shared = await sharedRead(ctx, v, pos)
            const r = shared.result
            out += shared.event()
            pos = r.next
            upToDate = r.upToDate
          }
          const c = control(v, pos, upToDate, cursor)
          cursor = c.cursor
          if (!sink.write(out + c.text)) return
          await sink.drained()
          announced = upToDate
          if (upToDate && v.state.closedAt !== undefined) return
          if (!upToDate) continue
        }
        const left = endAt - Date.now()
        if (left <= 0) return
        const woke = await wake.wait(Math.min(left, ctx.options.longPollMs), sink.signal)
        if (sink.signal.aborted) return
        try {
          v = await liveView(ctx, v.target, false)
        } catch {
          return // deleted or expired meanwhile: the client's next request gets the status
        }
        if (!woke && atTail(v, pos) && Date.now() < endAt) {
          const c = control(v, pos, true, cursor)
          cursor = c.cursor
          if (!sink.write(c.text)) return
        }
      }
    } finally {
      wake.close()
    }
  }
  return { status: 200, headers, stream }
}
