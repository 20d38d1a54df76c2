import type { GatewayContext } from '../config/context.js'
import { startPosition, tailPosition, tokenOf } from '../reads/read.js'
import { liveView } from '../stream/live-view.js'
import type { Backend } from '../../backends/backend.js'
import { parseStreamName, streamPathOf } from '../stream/names.js'
import type { StreamInfo, Subscription } from './subscription.js'
import { START_TOKEN } from '../stream/offsets.js'
import { HttpStatusError } from '../transport/http.js'

/** Where a stream starts and ends now, as `Stream-Next-Offset` tokens (both `START_TOKEN` when it does not exist). */
export interface StreamEnds {
  exists: boolean
  start: string
  tail: string
}

const MISSING: StreamEnds = { exists: false, start: START_TOKEN, tail: START_TOKEN }

/** The ends of the stream at `path` (a missing, expired or deleted stream has none). */
export async function streamEnds(ctx: GatewayContext, path: string): Promise<StreamEnds> {
  try {
    const v = await liveView(ctx, parseStreamName(path), false)
    return { exists: true, start: tokenOf(v, startPosition(v)), tail: tokenOf(v, tailPosition(v)) }
  } catch (e) {
    if (e instanceof HttpStatusError && (e.status === 404 || e.status === 410)) return MISSING
    throw e
  }
}

/** Offset tokens compare as strings (fixed width, incarnation first); `-1` sorts before every token (`-` < `0`). */
export const compareTokens = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/** Each stream `sub` follows, with its tail and whether it has pending work (a tail past the ack). */
export function streamInfos(ctx: GatewayContext, sub: Subscription): Promise<StreamInfo[]> {
  return Promise.all(
    [...sub.links.values()].map(async (l) => {
      const ends = await streamEnds(ctx, l.path)
      const from = l.acked === '-1' ? ends.start : l.acked
      return {
        path: l.path,
        link_type: l.explicit ? ('explicit' as const) : ('glob' as const),
        acked_offset: l.acked,
        tail_offset: ends.tail,
        has_pending: compareTokens(ends.tail, from) > 0,
      }
    }),
  )
}

/** Where a stream linked now starts: its tail, or (not there yet) its start, whenever it is made. */
export async function linkedAt(ctx: GatewayContext, path: string): Promise<string> {
  const ends = await streamEnds(ctx, path)
  return ends.exists ? ends.tail : '-1'
}

/** The paths of the store's streams (topics no path names are left out). */
export async function streamPaths(store: Backend): Promise<string[]> {
  const out: string[] = []
  for (const topic of await store.listTopics()) {
    const path = streamPathOf(topic)
    if (path !== undefined) out.push(path)
  }
  return out
}
