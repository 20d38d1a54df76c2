import type { Message } from '../core/types.js'
import type { GatewayContext } from './context.js'
import { HttpError } from './http.js'
import { formatToken, parseOffset } from './offsets.js'
import { park, takeReader } from './reader-pool.js'
import { isControl } from './records.js'
import type { StreamView } from './stream-view.js'

/** A read position: a segment of the stream's chain and a twainmq offset in it. */
export interface Position {
  seg: number
  offset: number
}

const limitOf = (v: StreamView, seg: number): number => (seg === v.chain.length - 1 ? v.tail : (v.chain[seg]!.limit ?? 0))

/** The same position, moved past the ends of inherited segments. */
function normalise(v: StreamView, p: Position): Position {
  let { seg, offset } = p
  while (seg < v.chain.length - 1 && offset >= limitOf(v, seg)) {
    seg++
    offset = v.chain[seg]!.start
  }
  return { seg, offset }
}

export const tailPosition = (v: StreamView): Position => ({ seg: v.chain.length - 1, offset: v.tail })
export const startPosition = (v: StreamView): Position => normalise(v, { seg: 0, offset: v.chain[0]!.start })
export const atTail = (v: StreamView, p: Position): boolean => p.seg === v.chain.length - 1 && p.offset >= v.tail
export const tokenOf = (v: StreamView, p: Position): string => {
  const n = normalise(v, p)
  return formatToken(v.chain[n.seg]!.incarnation, n.offset)
}

/** Resolve an offset a client sent (`-1`, `now`, a token); 400 for one that is not of this stream or past its tail. */
export function positionOf(v: StreamView, raw: string, what = 'offset'): Position {
  const o = parseOffset(raw, what)
  if (o.at === 'start') return startPosition(v)
  if (o.at === 'now') return tailPosition(v)
  const seg = v.chain.findIndex((s) => s.incarnation === o.incarnation)
  if (seg < 0) throw new HttpError(400, `The ${what} ${raw} is not an offset of stream "${v.target.name}" (was it deleted and created again?)`)
  if (seg === v.chain.length - 1 && o.offset < v.retainedStart) throw new HttpError(410, `The ${what} ${raw} is before the retained data of stream "${v.target.name}" (retention trimmed it): read from -1`)
  if (o.offset > limitOf(v, seg)) throw new HttpError(400, `The ${what} ${raw} is beyond the tail of stream "${v.target.name}" (${tokenOf(v, tailPosition(v))})`)
  return normalise(v, { seg, offset: Math.max(o.offset, v.chain[seg]!.start) })
}

export interface ReadResult {
  messages: Message[]
  next: Position
  /** Everything up to the tail was returned. */
  upToDate: boolean
}

/** Size of a message's value in a response (for paging). */
export const valueSize = (m: Message): number =>
  Buffer.isBuffer(m.value) ? m.value.length : typeof m.value === 'string' ? Buffer.byteLength(m.value) : (JSON.stringify(m.value)?.length ?? 4)

/** Read the data messages from `from` up to the tail: at most `maxBytes` of values, but at least one message. */
export async function readFrom(ctx: GatewayContext, v: StreamView, from: Position, maxBytes: number): Promise<ReadResult> {
  const messages: Message[] = []
  let bytes = 0
  let pos = normalise(v, from)
  while (!atTail(v, pos)) {
    const seg = v.chain[pos.seg]!
    const limit = limitOf(v, pos.seg)
    let reader = await takeReader(ctx.store, seg.topic, seg.partition, seg.incarnation, pos.offset)
    let full = false
    let ok = false
    try {
      while (pos.offset < limit && !full) {
        const n = Math.min(1000, limit - pos.offset)
        let batch = await reader.read(n)
        if (batch.length === 0) {
          // Below the view's tail an empty read is not proof that the data is gone: a reader can
          // answer from a read-ahead issued before the last append (Redis). Ask a fresh reader
          // before skipping to the limit, or the record would be lost to this reader (decision 140).
          await reader.close()
          reader = await ctx.store.openReader(seg.topic, seg.partition, pos.offset)
          batch = await reader.read(n)
        }
        if (batch.length === 0) break
        for (const m of batch) {
          if (m.offset >= limit) break
          if (!isControl(m.type)) {
            const size = valueSize(m)
            if (messages.length > 0 && bytes + size > maxBytes) {
              full = true // the next page starts with it
              break
            }
            messages.push(m)
            bytes += size
          }
          pos = { seg: pos.seg, offset: m.offset + 1 }
        }
      }
      ok = true
    } finally {
      if (ok) {
        if (reader.next !== pos.offset) reader.seek(pos.offset) // a full page stopped inside a batch
        park(ctx.store, seg.topic, seg.partition, seg.incarnation, reader)
      } else await reader.close()
    }
    if (full) break
    if (pos.offset < limit) pos = { seg: pos.seg, offset: limit } // trimmed or missing data: skip to the limit
    pos = normalise(v, pos)
  }
  return { messages, next: pos, upToDate: atTail(v, pos) }
}
