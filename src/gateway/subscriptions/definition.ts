import { createHash } from 'node:crypto'
import { HttpStatusError } from '../transport/http.js'
import { parseStreamName } from '../stream/names.js'
import { webhookUrlProblem } from './webhook-url.js'

/** Error codes of the `__ds` subscription routes (Durable Streams), each with its HTTP status. */
export const ERROR_STATUS = {
  INVALID_REQUEST: 400,
  WEBHOOK_URL_REJECTED: 400,
  TOKEN_INVALID: 401,
  TOKEN_EXPIRED: 401,
  SUBSCRIPTION_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  SUBSCRIPTION_ALREADY_EXISTS: 409,
  FENCED: 409,
  ALREADY_CLAIMED: 409,
  NO_PENDING_WORK: 409,
  INVALID_OFFSET: 409,
} as const

export type SubscriptionErrorCode = keyof typeof ERROR_STATUS

/**
 * A refusal of a subscription request, answered with its code's status, its `headers` and
 * `{ "error": { "code", "message", …extra } }`.
 */
export class SubscriptionError extends HttpStatusError {
  constructor(
    readonly code: SubscriptionErrorCode,
    message: string,
    readonly extra: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ) {
    super(ERROR_STATUS[code], message, headers)
    this.name = 'SubscriptionError'
  }
}

export type SubscriptionType = 'webhook' | 'pull-wake'

/** What a subscription was created with (its identity: the same again confirms it). */
export interface SubscriptionConfig {
  type: SubscriptionType
  /** Streams whose path matches are linked as they appear (see `globMatch`). */
  pattern?: string
  /** Streams linked by name at creation. */
  streams: string[]
  webhook?: { url: string }
  /** The JSON stream a pull-wake subscription's wake events are appended to. */
  wakeStream?: string
  leaseTtlMs: number
  description?: string
}

export const DEFAULT_LEASE_TTL_MS = 30_000
export const MIN_LEASE_TTL_MS = 1000
export const MAX_LEASE_TTL_MS = 600_000

/** A path without leading or trailing `/` (how subscriptions take stream paths and patterns). */
export const trimSlashes = (path: string): string => path.replace(/^\/+/, '').replace(/\/+$/, '')

/** A stream path as subscriptions keep it: no leading or trailing `/`; 400 unless it names a stream. */
export function streamPath(raw: unknown, what: string): string {
  if (typeof raw !== 'string' || raw.length === 0)
    throw new SubscriptionError('INVALID_REQUEST', `${what} must be a non-empty string, got ${JSON.stringify(raw)}`)
  const path = trimSlashes(raw)
  try {
    const t = parseStreamName(path)
    if (t.perPartition) throw new HttpStatusError(400, 'a per-partition stream')
    return t.name // decoded: `a%2Db` and `a-b` are one stream
  } catch (e) {
    throw new SubscriptionError(
      'INVALID_REQUEST',
      `${what} ${JSON.stringify(raw)} is not a stream path: ${(e as Error).message}`,
    )
  }
}

/** Check a create request's body (`PUT __ds/subscriptions/<id>`); 400 naming what is wrong. */
export function parseConfig(body: unknown): SubscriptionConfig {
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw new SubscriptionError('INVALID_REQUEST', 'The body must be a JSON object')
  const b = body as Record<string, unknown>
  if (b.type !== 'webhook' && b.type !== 'pull-wake')
    throw new SubscriptionError(
      'INVALID_REQUEST',
      `type must be "webhook" or "pull-wake", got ${JSON.stringify(b.type)}`,
    )
  let pattern: string | undefined
  if (b.pattern !== undefined) {
    if (typeof b.pattern !== 'string' || trimSlashes(b.pattern) === '')
      throw new SubscriptionError(
        'INVALID_REQUEST',
        `pattern must be a non-empty string, got ${JSON.stringify(b.pattern)}`,
      )
    pattern = trimSlashes(b.pattern)
  }
  if (b.streams !== undefined && !Array.isArray(b.streams))
    throw new SubscriptionError(
      'INVALID_REQUEST',
      `streams must be an array of stream paths, got ${JSON.stringify(b.streams)}`,
    )
  const streams = [...new Set(((b.streams ?? []) as unknown[]).map((s, i) => streamPath(s, `streams[${i}]`)))]
  if (pattern === undefined && streams.length === 0)
    throw new SubscriptionError('INVALID_REQUEST', 'A subscription needs a pattern, streams, or both')
  const lease = b.lease_ttl_ms ?? DEFAULT_LEASE_TTL_MS
  if (typeof lease !== 'number' || !Number.isInteger(lease) || lease < MIN_LEASE_TTL_MS || lease > MAX_LEASE_TTL_MS)
    throw new SubscriptionError(
      'INVALID_REQUEST',
      `lease_ttl_ms must be an integer from ${MIN_LEASE_TTL_MS} to ${MAX_LEASE_TTL_MS}, got ${JSON.stringify(b.lease_ttl_ms)}`,
    )
  if (b.description !== undefined && typeof b.description !== 'string')
    throw new SubscriptionError('INVALID_REQUEST', `description must be a string, got ${JSON.stringify(b.description)}`)
  const config: SubscriptionConfig = { type: b.type, streams, leaseTtlMs: lease }
  if (pattern !== undefined) config.pattern = pattern
  if (typeof b.description === 'string') config.description = b.description
  if (b.type === 'webhook') {
    const url = (b.webhook as { url?: unknown } | undefined)?.url
    if (typeof url !== 'string' || url === '')
      throw new SubscriptionError('INVALID_REQUEST', 'A webhook subscription needs webhook.url')
    const problem = webhookUrlProblem(url)
    if (problem !== undefined) throw new SubscriptionError('WEBHOOK_URL_REJECTED', problem)
    config.webhook = { url }
  } else {
    config.wakeStream = streamPath(b.wake_stream, 'wake_stream')
    if (streams.includes(config.wakeStream))
      throw new SubscriptionError(
        'INVALID_REQUEST',
        `wake_stream ${JSON.stringify(config.wakeStream)} is also one of streams: its own wake events would wake it again`,
      )
  }
  return config
}

/** The identity of a configuration: a repeated create with an equal one confirms, another is refused. */
export function configHash(c: SubscriptionConfig): string {
  const canonical = [
    c.type,
    c.pattern ?? null,
    [...c.streams].sort(),
    c.webhook?.url ?? null,
    c.wakeStream ?? null,
    c.leaseTtlMs,
    c.description ?? null,
  ]
  return createHash('sha256').update(JSON.stringify(canonical)).digest('hex')
}
