import type { GatewayContext } from '../config/context.js'
import { startPosition, tailPosition, tokenOf } from '../reads/read.js'
import { liveView } from '../stream/live-view.js'
import { parseStreamName } from '../stream/names.js'
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

/** Offset tokens compare as strings (fixed width, incarnation first); `-1` is before every token. */
export function compareTokens(a: string, b: string): number {
  if (a === b) return 0
  if (a === '-1') return -1
  if (b === '-1') return 1
  return a < b ? -1 : 1
}
