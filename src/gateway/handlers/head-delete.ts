import type { GatewayContext } from '../config/context.js'
import { HttpStatusError, reply, type GwResponse } from '../transport/http.js'
import type { StreamTarget } from '../stream/names.js'
import { tailPosition, tokenOf } from '../reads/read.js'
import { deleteStream } from '../stream/stream-delete.js'
import { liveView } from '../stream/live-view.js'
import { COMPACTION_HEADER } from '../stream/state-records.js'

/** HEAD: the stream's metadata (does not renew its TTL). */
export async function headStream(ctx: GatewayContext, target: StreamTarget): Promise<GwResponse> {
  const v = await liveView(ctx, target, false)
  const h: Record<string, string> = {
    'content-type': v.contentType,
    'stream-next-offset': tokenOf(v, tailPosition(v)),
    'cache-control': 'no-store',
  }
  if (v.config?.ttlSeconds !== undefined) h['stream-ttl'] = String(v.config.ttlSeconds)
  if (v.config?.expiresAt !== undefined) h['stream-expires-at'] = v.config.expiresAt
  if (v.state.closedAt !== undefined) h['stream-closed'] = 'true'
  if (v.config?.compaction !== undefined) h[COMPACTION_HEADER] = v.config.compaction
  return reply(200, h)
}

/** DELETE: 204; soft when forks still read the stream (it then answers 410). */
export async function deleteStreamRequest(ctx: GatewayContext, target: StreamTarget): Promise<GwResponse> {
  const v = await liveView(ctx, target, false)
  if (!v.config)
    throw new HttpStatusError(
      405,
      `Stream "${target.name}" is a topic of the Node API: delete it with the Node API or the CLI`,
    )
  await deleteStream(ctx, v)
  return reply(204)
}
