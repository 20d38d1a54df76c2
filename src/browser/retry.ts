// When a failed read is tried again: network errors ("TypeError: network error" when the gateway
// dies mid-SSE, connection refused while it restarts) and 408/429/5xx answers are; other answers
// (401, 403, 404, 400, 410) are final and surface as an HttpError with their status.
import { ConnectionError, HttpError, InvalidArgumentError } from '../core/errors.js'

/** The HTTP status an error from `@durable-streams/client` carries, if any. */
export function statusOf(error: unknown): number | undefined {
  const status = (error as { status?: unknown } | null)?.status
  return typeof status === 'number' ? status : undefined
}

/** The error to surface for a final failure, or undefined when the read may be tried again. */
function finalError(error: unknown, url: string): Error | undefined {
  // A bad option met at a request (a malformed trace context): trying again cannot help.
  if (error instanceof InvalidArgumentError) return error
  const status = statusOf(error)
  if (status === undefined) return undefined
  if (status === 408 || status === 429 || status >= 500) return undefined
  return new HttpError(`HTTP ${status} from ${url}: ${detailOf(error, status)}`, { status, url, cause: error })
}

/**
 * What the server said, without what the message already says: the client's errors carry the
 * body (`text`, or `json`) and a message of their own that repeats the status and the URL
 * (`HTTP Error 404 at …?offset=-1: …`).
 */
function detailOf(error: unknown, status: number): string {
  const e = error as { text?: unknown; json?: unknown; message?: unknown } | null
  if (typeof e?.text === 'string' && e.text.trim() !== '') return e.text.trim()
  if (e?.json !== undefined && e.json !== null) return JSON.stringify(e.json)
  const message = typeof e?.message === 'string' ? e.message : String(error)
  return message.replace(new RegExp(`^HTTP Error ${status} at \\S+: `), '')
}

/** The wait before retry `attempt` (0-based): 100 ms doubling to at most 2 s. */
export function backoffMs(attempt: number): number {
  return Math.min(2000, 100 * 2 ** Math.min(attempt, 5))
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve()
    const done = (): void => {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal.addEventListener('abort', done, { once: true })
  })
}

/**
 * A read's failures in a row: each failure is judged (`verdict`: the error to end the read with,
 * or undefined to try again after `backoff`); an answer that gets through (`reset`) starts the
 * count again. A read keeps trying for `retryMs` of failing in a row.
 */
export class FailureClock {
  private attempt = 0
  private since: number | undefined

  constructor(
    private readonly url: string,
    private readonly retryMs: number,
  ) {}

  reset(): void {
    this.attempt = 0
    this.since = undefined
  }

  verdict(error: unknown): Error | undefined {
    const final = finalError(error, this.url)
    if (final) return final
    this.since ??= Date.now()
    if (Date.now() - this.since <= this.retryMs) return undefined
    const why = error instanceof Error ? error.message : String(error)
    return new ConnectionError(`cannot read ${this.url}: still failing after ${this.retryMs} ms (${why})`, {
      cause: error,
    })
  }

  /** The wait before the next try: 100 ms doubling to 2 s (at once when `signal` aborts). */
  backoff(signal: AbortSignal): Promise<void> {
    return pause(backoffMs(this.attempt++), signal)
  }
}
