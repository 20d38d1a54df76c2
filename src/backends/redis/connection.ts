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

/**
 * How long a command on a Cluster node may go unanswered before it fails (and is retried where it
 * is safe to): a frozen or cut-off master answers nothing and keeps its connection open, so without
 * a bound a send would wait for the whole outage instead of moving to the promoted replica.
 */
export const CLUSTER_COMMAND_TIMEOUT_MS = 1500
/** How often a Cluster client asks for the slot map, so it learns of a promotion that sent no MOVED. */
const SLOTS_REFRESH_MS = 1000

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

function clusterNodes(url: string): {
  nodes: Array<{ host: string; port: number }>
  username?: string
  password?: string
} {
  const rest = url.replace(/^redis\+cluster:\/\//i, '').replace(/\/.*$/, '')
  const at = rest.lastIndexOf('@')
  const auth = at >= 0 ? rest.slice(0, at) : ''
  const hosts = at >= 0 ? rest.slice(at + 1) : rest
  const nodes = hosts
    .split(',')
    .filter(Boolean)
    .map((h) => {
      const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(h)
      if (!m)
        throw new InvalidArgumentError(
          `Redis Cluster node ${JSON.stringify(h)} in ${JSON.stringify(url)} is not host:port`,
        )
      return { host: (m[1] as string).replace(/^\[|\]$/g, ''), port: m[2] ? Number(m[2]) : 6379 }
    })
  if (nodes.length === 0)
    throw new InvalidArgumentError(
      `Redis Cluster URL ${JSON.stringify(url)} names no nodes: use redis+cluster://host:port,host:port`,
    )
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
  const redisOptions: ClusterOptions['redisOptions'] = {
    protocol: 2,
    disableClientInfo: true,
    connectionName: 'twainmq',
    connectTimeout: CONNECT_TIMEOUT_MS,
    commandTimeout: CLUSTER_COMMAND_TIMEOUT_MS,
  }
  if (username !== undefined) redisOptions.username = username
  if (password !== undefined) redisOptions.password = password
  return refreshSlots(new Cluster(nodes, { lazyConnect: true, clusterRetryStrategy: retryStrategy, redisOptions }))
}

/**
 * Ask for the slot map every second while connected (ioredis refreshes it on MOVED, but a frozen
 * master sends none). The timer is unref'd: it never keeps the process alive.
 */
export function refreshSlots(cluster: Cluster): Cluster {
  let timer: NodeJS.Timeout | undefined
  cluster.on('ready', () => {
    if (timer) return
    timer = setInterval(() => cluster.refreshSlotsCache(), SLOTS_REFRESH_MS)
    timer.unref()
  })
  cluster.on('end', () => {
    clearInterval(timer)
    timer = undefined
  })
  return cluster
}

/**
 * A dedicated connection for blocking reads or pub/sub: commands wait through reconnects (no retry
 * limit) so a blocked read resumes by itself; `disconnect()` ends it at once.
 *
 * `blockingTimeout` (Cluster only, default true): a blocked read on a node that stopped answering
 * resolves empty once its BLOCK time and a grace have passed (ioredis's `blockingTimeout`). Only for
 * reads that may be repeated (XREAD): the command is still sent and run when it resolved empty
 * while queued, so an `XREADGROUP` could take entries whose reply is thrown away (decision 181).
 */
export function createDedicated(base: Client, name: string, options: { blockingTimeout?: boolean } = {}): Client {
  if (base instanceof Cluster) {
    // No command timeout on a blocking connection (a blocked read waits by design).
    const redisOptions = {
      ...base.options.redisOptions,
      connectionName: name,
      commandTimeout: undefined,
      blockingTimeout: options.blockingTimeout === false ? undefined : 1000,
    }
    return base.duplicate(undefined, { lazyConnect: false, enableAutoPipelining: false, redisOptions })
  }
  return base.duplicate({
    lazyConnect: false,
    enableAutoPipelining: false,
    maxRetriesPerRequest: null,
    connectionName: name,
  })
}

const CONNECTION_RE =
  /Connection is closed|Command timed out|aborted due to connection close|ECONNRESET|ECONNREFUSED|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENOTFOUND|Stream isn't writeable|Socket closed|max retries per request|LOADING|connect ETIMEDOUT|None of startup nodes|Failed to refresh slots|CLUSTERDOWN/i

/**
 * Transient Cluster states: a slot moving (MOVED, ASK, TRYAGAIN while its keys are split between two
 * masters), a failover (CLUSTERDOWN, UNBLOCKED: a blocked read on a slot that moved) or ioredis giving
 * up after 16 of those in a row ("Too many Cluster redirections"). The command did not run: retrying
 * is as safe as after a dropped connection.
 */
const CLUSTER_TRANSIENT_RE =
  /^(MOVED|ASK|TRYAGAIN|CLUSTERDOWN|UNBLOCKED)\b|Too many Cluster redirections|TRYAGAIN Multiple keys|Script attempted to access a non local key|while the cluster is down/

/** Errors of credentials or rights: the server refuses who connects, so retrying cannot help. */
export const REFUSED_RE = /^(NOAUTH|WRONGPASS|NOPERM)\b/

/**
 * Whether a failure is the connection's (the command may or may not have run) or a transient
 * Cluster state (it did not run): either way the same command may be sent again.
 */
export function isConnectionError(e: unknown): boolean {
  if (e instanceof ConnectionError) return true
  if (!(e instanceof Error)) return false
  return (
    e.name === 'MaxRetriesPerRequestError' ||
    CONNECTION_RE.test(e.message) ||
    CLUSTER_TRANSIENT_RE.test(e.message) ||
    CONNECTION_RE.test(String((e as NodeJS.ErrnoException).code ?? ''))
  )
}

/** Wrap an ioredis failure: `ConnectionError` when the connection failed, else `BackendError`; both name what was done. */
export function redisError(what: string, e: unknown): TwainError {
  if (e instanceof TwainError) return e
  const detail = e instanceof Error ? e.message : String(e)
  // The server refuses the credentials or their rights (an ACL changed while running): not retriable.
  if (REFUSED_RE.test(detail)) return new ConnectionError(`${what}: ${detail}`, { cause: e, retriable: false })
  return isConnectionError(e)
    ? new ConnectionError(`${what}: ${detail}`, { cause: e })
    : new BackendError(`${what}: ${detail}`, { cause: e })
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))
