import type { GatewayContext } from '../config/context.js'
import { HttpStatusError } from '../transport/http.js'
import type { StreamTarget } from './names.js'
import { removeExpired } from './stream-delete.js'
import { isExpired, touch } from './access-time.js'
import { loadView, type StreamView } from './stream-view.js'

/**
 * The stream a request works on: 404 when missing or expired (an expired one is deleted now), 410
 * when soft-deleted. `refresh` renews its sliding TTL (reads and appends do; HEAD does not).
 */
export async function liveView(ctx: GatewayContext, target: StreamTarget, refresh: boolean): Promise<StreamView> {
  const v = await loadView(ctx, target)
  if (!v) throw new HttpStatusError(404, `Stream "${target.name}" does not exist`)
  if (await isExpired(ctx, v)) {
    await removeExpired(ctx, v)
    throw new HttpStatusError(404, `Stream "${target.name}" does not exist (it expired)`)
  }
  if (v.state.deletedAt !== undefined)
    throw new HttpStatusError(410, `Stream "${target.name}" is deleted (its forks still read its data)`)
  if (refresh) touch(ctx, v)
  return v
}
