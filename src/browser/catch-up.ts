// A catch-up read without a live request: plain GETs from a position until the gateway says the
// reader is up to date (or a bound is reached), retried as a tail's reads are. Tails shared between
// pages (tab-share.ts) fill what the shared live read did not bring them this way, so a page never
// holds a live request of its own.
import { AbortError } from '../core/errors.js'
import type { BrowserMessage } from './message.js'
import { FailureClock } from './retry.js'
import { batchTokens, compareTokens, parsePosition, type Position } from './tokens.js'

/** Where a catch-up reads. */
export interface CatchUpPlan {
  stream: string
  url: string
  headers: () => Record<string, string>
  fetch: typeof fetch | undefined
  retryMs: number
}

/** One page of a catch-up: its messages, where the next page starts, and the stream's state there. */
export interface CatchUpPage<V> {
  messages: BrowserMessage<V>[]
  /** The position after this page (a gateway token). */
  next: string
  upToDate: boolean
  closed: boolean
}

/** Why a GET failed: its status, for `finalError`. */
class StatusError extends Error {
  constructor(
    readonly status: number,
    readonly text: string,
  ) {
    super(`HTTP ${status}`)
  }
}

/**
 * Read from `from` with plain GETs, page by page (`onPage` for each, awaited), until up to date,
 * closed, or at `to` (exclusive; messages at or after it are not given). Resolves with the
 * position reached. A network error or a retriable status is tried again after a backoff for at
 * most `retryMs` of failing in a row; other statuses end it with `HttpError`.
 */
export async function catchUp<V>(
  plan: CatchUpPlan,
  from: Position,
  to: string | undefined,
  signal: AbortSignal,
  onPage: (page: CatchUpPage<V>) => void | Promise<void>,
): Promise<{ position: Position; closed: boolean }> {
  let position = from
  const failures = new FailureClock(plan.url, plan.retryMs)
  for (;;) {
    if (signal.aborted) throw new AbortError('the read was closed')
    let page: CatchUpPage<V>
    try {
      page = await getPage<V>(plan, position, signal)
    } catch (error) {
      if (signal.aborted) throw new AbortError('the read was closed')
      const end = failures.verdict(error)
      if (end) throw end
      await failures.backoff(signal)
      continue
    }
    failures.reset()
    let messages = page.messages
    let reached = false
    if (to !== undefined) {
      const stop = messages.findIndex((m) => compareTokens(m.offset, to) >= 0)
      if (stop >= 0) {
        messages = messages.slice(0, stop)
        reached = true
      }
    }
    const skip = Math.min(position.skip, messages.length)
    const given = messages.slice(skip)
    if (given.length > 0 || page.upToDate || page.closed) await onPage({ ...page, messages: given })
    if (reached) return { position: parsePosition(to as string), closed: false }
    const skipLeft = position.skip - skip
    position = skipLeft > 0 && page.messages.length === 0 ? position : { base: page.next, skip: 0 }
    if (to !== undefined && compareTokens(page.next, to) >= 0) return { position, closed: page.closed }
    if (page.upToDate || page.closed) return { position, closed: page.closed }
  }
}

async function getPage<V>(plan: CatchUpPlan, position: Position, signal: AbortSignal): Promise<CatchUpPage<V>> {
  const f = plan.fetch ?? ((...args: Parameters<typeof fetch>) => fetch(...args))
  const res = await f(`${plan.url}?offset=${encodeURIComponent(position.base)}`, { headers: plan.headers(), signal })
  if (!res.ok && res.status !== 204) throw new StatusError(res.status, await res.text().catch(() => ''))
  const next = res.headers.get('stream-next-offset')
  if (next === null) throw new StatusError(502, 'no Stream-Next-Offset in the answer')
  const type = res.headers.get('content-type') ?? ''
  let values: unknown[]
  if (res.status === 204) values = []
  else if (type.includes('application/json')) values = (await res.json()) as unknown[]
  else if (type.startsWith('text/')) {
    const text = await res.text()
    values = text.length > 0 ? [text] : []
  } else {
    const data = new Uint8Array(await res.arrayBuffer())
    values = data.length > 0 ? [data] : []
  }
  const start = { base: position.base, skip: 0 }
  const tokens = batchTokens(start, next, values.length)
  const messages = values.map((value, i) => ({
    stream: plan.stream,
    offset: tokens[i] as string,
    value: value as V,
    resume: tokens[i + 1] as string,
  }))
  return {
    messages,
    next,
    upToDate: res.headers.get('stream-up-to-date') === 'true',
    closed: res.headers.get('stream-closed') === 'true',
  }
}
