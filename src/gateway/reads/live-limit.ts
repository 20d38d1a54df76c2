import type { LiveReadMode } from '../config/metrics-sink.js'
import { HttpStatusError, type GwResponse } from '../transport/http.js'

/**
 * Live reads (long-poll and SSE) open at once per client: a client past the cap gets 429 with
 * `Retry-After`. A client is its token's name with `auth`, else the `clientKey` option's answer,
 * else the remote address (Node handler); a request with no client key is not counted.
 */
export class LiveLimit {
  private readonly counts = new Map<string, number>()
  private readonly byMode: Record<LiveReadMode, number> = { 'long-poll': 0, sse: 0, overview: 0 }

  constructor(private readonly max: number) {}

  /**
   * Take a slot for `key` (not counted against the cap when undefined) for a live read of `mode`;
   * returns its release, which is idempotent.
   */
  enter(key: string | undefined, mode: LiveReadMode): () => void {
    if (key !== undefined) {
      const n = this.counts.get(key) ?? 0
      if (n >= this.max)
        throw new HttpStatusError(
          429,
          `Too many live reads from ${key}: at most ${this.max} at once (maxLivePerClient)`,
          { 'retry-after': '1' },
        )
      this.counts.set(key, n + 1)
    }
    this.byMode[mode]++
    let done = false
    return () => {
      if (done) return
      done = true
      this.byMode[mode]--
      if (key === undefined) return
      const left = (this.counts.get(key) ?? 1) - 1
      if (left <= 0) this.counts.delete(key)
      else this.counts.set(key, left)
    }
  }

  /** Live reads open now, by mode (every client, counted or not). */
  open(): Readonly<Record<LiveReadMode, number>> {
    return { ...this.byMode }
  }

  /** Live reads open now for `key` (tests, diagnostics). */
  count(key: string): number {
    return this.counts.get(key) ?? 0
  }
}

/** `res` with `release` run when its streamed body ends (at once when it has none). */
export function releasedWith(res: GwResponse, release: () => void, signal: AbortSignal): GwResponse {
  const stream = res.stream
  if (!stream) {
    release()
    return res
  }
  // Also when the response is never streamed (the client left before it started). The listener is
  // removed once the stream ends: a Fetch request's signal (`AbortSignal.any`) that still has a
  // listener is kept alive, with all it reaches, until the gateway closes.
  signal.addEventListener('abort', release, { once: true })
  return {
    ...res,
    stream: (sink) =>
      stream(sink).finally(() => {
        signal.removeEventListener('abort', release)
        release()
      }),
  }
}
