import type { RecordInput } from '../../backends/record.js'
import { ValueKind } from '../../core/values.js'
import type { GatewayContext } from '../config/context.js'
import { isJson, valueBytes } from '../transport/content.js'
import { HttpStatusError } from '../transport/http.js'
import { parseStreamName } from '../stream/names.js'
import { atTail, positionOf, readFrom, tailPosition } from '../reads/read.js'
import { H_BATCH, record } from '../stream/records.js'
import type { Segment } from '../stream/stream-config.js'
import { isExpired } from '../stream/access-time.js'
import { loadView, type StreamView } from '../stream/stream-view.js'

export interface ForkPlan {
  source: StreamView
  /** The segments the fork inherits. */
  inherited: Segment[]
  /** The part of the next stored unit a sub-offset takes (appended first to the fork). */
  prefix: RecordInput[]
}

/** Resolve `Stream-Forked-From` to a live source stream (404 missing, 409 soft-deleted). */
export async function forkSource(ctx: GatewayContext, basePath: string, from: string): Promise<StreamView> {
  const path = from.startsWith('http://') || from.startsWith('https://') ? new URL(from).pathname : from
  if (!path.startsWith(`${basePath}/`))
    throw new HttpStatusError(404, `Fork source ${JSON.stringify(from)} is not a stream of this server`)
  const target = parseStreamName(path.slice(basePath.length + 1))
  const source = await loadView(ctx, target)
  if (!source || (await isExpired(ctx, source)))
    throw new HttpStatusError(404, `Fork source ${JSON.stringify(from)} does not exist`)
  if (source.state.deletedAt !== undefined)
    throw new HttpStatusError(409, `Fork source ${JSON.stringify(from)} is deleted (it still serves its forks)`)
  // Compaction goes on removing records of the source that a fork would inherit.
  if (source.meta.compact === true)
    throw new HttpStatusError(409, `Fork source ${JSON.stringify(from)} is compacted: it cannot be forked`)
  return source
}

/** Where a fork diverges: the inherited segments and the sub-offset prefix (400 when out of range). */
export async function planFork(
  ctx: GatewayContext,
  source: StreamView,
  offset: string | undefined,
  sub: number,
): Promise<ForkPlan> {
  const at = offset === undefined ? tailPosition(source) : positionOf(source, offset, 'Stream-Fork-Offset')
  const inherited: Segment[] = []
  for (let i = 0; i <= at.seg; i++) {
    const s = source.chain[i]!
    const limit = i === at.seg ? at.offset : (s.limit ?? 0)
    inherited.push({ ...s, limit }) // empty ones too: the fork keeps every stream it reads through alive
  }
  const prefix: RecordInput[] = []
  if (sub > 0) {
    if (atTail(source, at))
      throw new HttpStatusError(400, `Stream-Fork-Sub-Offset ${sub} overshoots: nothing follows the fork offset`)
    const first = await readFrom(ctx, source, at, 1)
    const unit = first.messages[0]!
    if (isJson(source.contentType)) {
      const size = Number(unit.headers[H_BATCH] ?? '1')
      if (sub > size)
        throw new HttpStatusError(400, `Stream-Fork-Sub-Offset ${sub} overshoots the next append (${size} messages)`)
      const rest = await readFrom(ctx, source, at, sub)
      for (const m of rest.messages) prefix.push(record(ValueKind.Json, JSON.stringify(m.value)))
      if (prefix.length > 1) prefix[0]!.headers = { [H_BATCH]: String(prefix.length) }
    } else {
      const bytes = valueBytes(unit)
      if (sub > bytes.length)
        throw new HttpStatusError(
          400,
          `Stream-Fork-Sub-Offset ${sub} overshoots the next append (${bytes.length} bytes)`,
        )
      prefix.push(record(ValueKind.Bytes, Buffer.from(bytes.subarray(0, sub))))
    }
  }
  return { source, inherited, prefix }
}
