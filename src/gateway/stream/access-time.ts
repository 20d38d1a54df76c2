import type { GatewayContext } from '../config/context.js'
import { perStore } from './per-store.js'
import { accessKey, type StreamView } from './stream-view.js'

/** A process shares a stream's access time at most this often (and at most every tenth of its TTL). */
const SHARE_EVERY_MS = 1000

/** When this process last shared each stream's access time. */
const shared = perStore<number>()

/** The last access this gateway knows of: its own reads, the stream's creation and newest record. */
const lastKnown = (ctx: GatewayContext, v: StreamView): number =>
  Math.max(ctx.access.get(accessKey(v)) ?? 0, v.meta.createdAt, v.state.lastWrite)

/** Whether a stream's TTL or Expires-At has passed, by what this gateway knows (see {@link isExpired}). */
export function expired(ctx: GatewayContext, v: StreamView, now = Date.now()): boolean {
  const c = v.config
  if (!c) return false
  if (c.expiresAtMs !== undefined && now >= c.expiresAtMs) return true
  return c.ttlSeconds !== undefined && now >= lastKnown(ctx, v) + c.ttlSeconds * 1000
}

/**
 * Whether a stream has expired for every gateway over the store: a TTL that passed by this
 * gateway's knowledge is checked against the access time others shared (the store's `lastAccess`)
 * before the stream is treated as gone.
 */
export async function isExpired(ctx: GatewayContext, v: StreamView): Promise<boolean> {
  if (!expired(ctx, v)) return false
  if (v.config?.expiresAtMs !== undefined && Date.now() >= v.config.expiresAtMs) return true
  const others = await ctx.store.lastAccess(v.target.topic)
  if (others === undefined) return true
  const key = accessKey(v)
  ctx.access.set(key, Math.max(ctx.access.get(key) ?? 0, others))
  return expired(ctx, v)
}

/**
 * Renew a stream's sliding TTL: at once for this gateway, and for the others through the store's
 * `markAccess`, at most once a second (or a tenth of the TTL) per stream, off the request's path.
 */
export function touch(ctx: GatewayContext, v: StreamView): void {
  const ttl = v.config?.ttlSeconds
  if (ttl === undefined) return
  const now = Date.now()
  const key = accessKey(v)
  ctx.access.set(key, now)
  const sent = shared(ctx.store)
  if (now - (sent.get(key) ?? 0) < Math.min(SHARE_EVERY_MS, ttl * 100)) return
  sent.set(key, now)
  void ctx.store.markAccess(v.target.topic, now).catch(() => sent.delete(key))
}

/** Forget a stream's access times (it was deleted). */
export function forgetAccess(ctx: GatewayContext, v: StreamView): void {
  ctx.access.delete(accessKey(v))
  shared(ctx.store).delete(accessKey(v))
}
