import type { PartitionReader } from '../../backends/backend.js'
import { rawBudget, type RawBudget, type RawRecord } from '../../backends/record.js'
import type { Message } from '../../core/types.js'
import type { GatewayContext } from '../config/context.js'
import { HttpStatusError } from '../transport/http.js'
import { formatToken, parseOffset } from '../stream/offsets.js'
import { park, takeReader } from '../stream/reader-pool.js'
import { PageBody } from './page-body.js'
import { isControl } from '../stream/records.js'
import type { StreamView } from '../stream/stream-view.js'

/** A read position: a segment of the stream's chain and a twainmq offset in it. */
export interface Position {
  seg: number
  offset: number
}

const limitOf = (v: StreamView, seg: number): number =>
  seg === v.chain.length - 1 ? v.tail : (v.chain[seg]!.limit ?? 0)

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
  if (seg < 0)
    throw new HttpStatusError(
      400,
      `The ${what} ${raw} is not an offset of stream "${v.target.name}" (was it deleted and created again?)`,
    )
  if (seg === v.chain.length - 1 && o.offset < v.retainedStart)
    throw new HttpStatusError(
      410,
      `The ${what} ${raw} is before the retained data of stream "${v.target.name}" (retention trimmed it): read from -1`,
    )
  if (o.offset > limitOf(v, seg))
    throw new HttpStatusError(
      400,
      `The ${what} ${raw} is beyond the tail of stream "${v.target.name}" (${tokenOf(v, tailPosition(v))})`,
    )
  return normalise(v, { seg, offset: Math.max(o.offset, v.chain[seg]!.start) })
}

/** What a read stopped at. */
export interface ReadEnd {
  next: Position
  /** Everything up to the tail was read. */
  upToDate: boolean
}

export interface ReadResult extends ReadEnd {
  messages: Message[]
}

/** A read as a response body (see {@link PageBody}). */
export interface PageResult extends ReadEnd {
  body: Buffer
  /** Data messages in it. */
  count: number
}

type Item = { offset: number; type?: string | undefined }
type Take<T> = (reader: PartitionReader, max: number) => Promise<T[]>

/**
 * Read the records from `from` up to the view's tail, skipping control records; `accept` takes
 * each data record and answers false to stop before it (the next read starts with it).
 * `afterBatch` runs after the records of each read are accepted, before the next read (raw records
 * are valid until then); it answers true when the reads themselves stopped before a record that
 * has no room (see `RawBudget`).
 */
async function readRange<T extends Item>(
  ctx: GatewayContext,
  v: StreamView,
  from: Position,
  take: Take<T>,
  accept: (item: T) => boolean,
  afterBatch = () => false,
): Promise<ReadEnd> {
  let pos = normalise(v, from)
  let full = false
  while (!atTail(v, pos) && !full) {
    const seg = v.chain[pos.seg]!
    const limit = limitOf(v, pos.seg)
    let reader = await takeReader(ctx.store, 'data', seg.topic, seg.partition, seg.incarnation, pos.offset)
    let ok = false
    try {
      while (pos.offset < limit && !full) {
        const n = Math.min(1000, limit - pos.offset)
        let batch = await take(reader, n)
        if (batch.length === 0 && afterBatch()) {
          full = true // the read found the next record has no room
          break
        }
        if (batch.length === 0) {
          // Below the view's tail an empty read is not proof that the data is gone (a Redis reader
          // answered from a read-ahead issued before the last append, fixed in 1c88769). Ask a
          // fresh reader before skipping to the limit, or the record would be lost (decision 140).
          await reader.close()
          reader = await ctx.store.openReader(seg.topic, seg.partition, pos.offset)
          batch = await take(reader, n)
        }
        if (batch.length === 0) break
        for (const m of batch) {
          if (m.offset >= limit) break
          if (!isControl(m.type) && !accept(m)) {
            full = true
            break
          }
          pos = { seg: pos.seg, offset: m.offset + 1 }
        }
        if (afterBatch()) full = true
      }
      ok = true
    } finally {
      if (ok) {
        if (reader.next !== pos.offset) reader.seek(pos.offset) // a full page stopped inside a batch
        park(ctx.store, 'data', seg.topic, seg.partition, seg.incarnation, reader)
      } else await reader.close()
    }
    if (!full && pos.offset < limit) pos = { seg: pos.seg, offset: limit } // trimmed or missing data: skip to the limit
    pos = normalise(v, pos)
  }
  return { next: pos, upToDate: atTail(v, pos) }
}

/** The data messages from `from` up to the tail, decoded: at most `max` of them, but at least one. */
export async function readFrom(ctx: GatewayContext, v: StreamView, from: Position, max: number): Promise<ReadResult> {
  const messages: Message[] = []
  const end = await readRange(
    ctx,
    v,
    from,
    (r, n) => r.read(n),
    (m: Message) => messages.length < max && messages.push(m) > 0,
  )
  return { messages, ...end }
}

/**
 * The data from `from` up to the tail as a response body: at most `maxBytes` of values, but at
 * least one message. Stores with raw reads give their stored bytes, copied into the body as they are.
 */
export async function readPage(
  ctx: GatewayContext,
  v: StreamView,
  from: Position,
  maxBytes: number,
): Promise<PageResult> {
  const expect = Math.min(maxBytes, (v.tail - from.offset) * 128)
  const page = new PageBody(v.contentType, expect, v.config?.compaction === 'state')
  const accept = (r: RawRecord): boolean => {
    if (page.count > 0 && page.bytes + page.sizeOf(r) > maxBytes) return false
    page.addRaw(r)
    return true
  }
  // The reads stop where the page does (stored sizes; `accept` still has the last word for values
  // converted on the way), so a full page leaves its reader where the next page starts.
  const budget = rawBudget(maxBytes)
  const afterBatch = (): boolean => {
    page.flush()
    // Filled by control records alone (they count too): a page has at least one message.
    if (budget.full && page.count === 0) Object.assign(budget, rawBudget(maxBytes))
    return budget.full
  }
  const end = await readRange(ctx, v, from, rawTake(budget), accept, afterBatch)
  return { body: page.finish(), count: page.count, ...end }
}

/** Raw records from a reader, within the page's budget. */
function rawTake(budget: RawBudget): Take<RawRecord> {
  return (reader, max) => reader.readRaw(max, budget)
}
