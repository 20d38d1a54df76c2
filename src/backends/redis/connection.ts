import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis'
import { BackendError, ConnectionError, InvalidArgumentError, TwainError } from '../../core/errors.js'

/** A command client: one Redis, or a Redis Cluster. */
export type Client = Redis | Cluster

/** Where the Redis backend connects. */
export interface RedisTarget {
  url: string
  cluster: boolean
}

/** How long a connection attempt may take. */
export const CONNECT_TIMEOUT_MS = 5000

/** Reconnect delays: 50 ms doubling to 2 s. */
const retryStrategy = (times: number): number => Math.min(50 * 2 ** Math.min(times - 1, 6), 2000)

const BASE: RedisOptions = {
  protocol: 2,
  lazyConnect: true,
  disableClientInfo: true,
  connectionName: 'twainmq',
  retryStrategy,
  connectTimeout: CONNECT_TIMEOUT_MS,
}

function clusterNodes(url: string): { nodes: Array<{ host: string; port: number }>; username?: string; password?: string } {
  const rest = url.replace(/^redis\+cluster:\/\//i, '').replace(/\/.*$/, '')
  const at = rest.lastIndexOf('@')
  const auth = at >= 0 ? rest.slice(0, at) : ''
  const hosts = at >= 0 ? rest.slice(at + 1) : rest
  const nodes = hosts
    .split(',')
    .filter(Boolean)
    .map((h) => {
      const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(h)
      if (!m) throw new InvalidArgumentError(`Redis Cluster node ${JSON.stringify(h)} in ${JSON.stringify(url)} is not host:port`)
      return { host: (m[1] as string).replace(/^\[|\]$/g, ''), port: m[2] ? Number(m[2]) : 6379 }
    })
  if (nodes.length === 0) throw new InvalidArgumentError(`Redis Cluster URL ${JSON.stringify(url)} names no nodes: use redis+cluster://host:port,host:port`)
  const out: { nodes: typeof nodes; username?: string; password?: string } = { nodes }
  if (auth) {
    const colon = auth.indexOf(':')
    if (colon >= 0) {
      if (colon > 0) out.username = decodeURIComponent(auth.slice(0, colon))
      out.password = decodeURIComponent(auth.slice(colon + 1))
    } else out.password = decodeURIComponent(auth)
  }
  return out
}

/** The shared command client of a target (not connected yet: call `connect()`). */
export function createClient(target: RedisTarget): Client {
  if (!target.cluster) return new Redis(target.url, BASE)
  const { nodes, username, password } = clusterNodes(target.url)
  const redisOptions: ClusterOptions['redisOptions'] = { protocol: 2, disableClientInfo: true, connectionName: 'twainmq', connectTimeout: CONNECT_TIMEOUT_MS }
  if (username !== undefined) redisOptions.username = username
  if (password !== undefined) redisOptions.password = password
  return new Cluster(nodes, { lazyConnect: true, clusterRetryStrategy: retryStrategy, redisOptions })
}

/**
 * A dedicated connection for blocking reads or pub/sub: commands wait through reconnects (no retry
 * limit) so a blocked read resumes by itself; `disconnect()` ends it at once.
 */
export function createDedicated(base: Client, name: string): Client {
  if (base instanceof Cluster) return base.duplicate(undefined, { lazyConnect: false, enableAutoPipelining: false, redisOptions: { ...base.options.redisOptions, connectionName: name } })
  return base.duplicate({ lazyConnect: false, enableAutoPipelining: false, maxRetriesPerRequest: null, connectionName: name })
}

const CONNECTION_RE = /Connection is closed|aborted due to connection close|ECONNRESET|ECONNREFUSED|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENOTFOUND|Stream isn't writeable|Socket closed|max retries per request|LOADING|connect ETIMEDOUT|None of startup nodes|Failed to refresh slots|CLUSTERDOWN/i

/** Whether a failure is the connection's (the command may or may not have run). */
export function isConnectionError(e: unknown): boolean {
  if (e instanceof ConnectionError) return true
  if (!(e instanceof Error)) return false
  return e.name === 'MaxRetriesPerRequestError' || CONNECTION_RE.test(e.message) || CONNECTION_RE.test(String((e as NodeJS.ErrnoException).code ?? ''))
}

/** Wrap an ioredis failure: `ConnectionError` when the connection failed, else `BackendError`; both name what was done. */
export function redisError(what: string, e: unknown): TwainError {
  if (e instanceof TwainError) return e
  const detail = e instanceof Error ? e.message : String(e)
  return isConnectionError(e) ? new ConnectionError(`${what}: ${detail}`, { cause: e }) : new BackendError(`${what}: ${detail}`, { cause: e })
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))
