import { Cluster } from 'ioredis'
import { ConnectionError, InvalidArgumentError } from '../../core/errors.js'
import { connectError, redact } from './connect-error.js'
import {
  CLUSTER_COMMAND_TIMEOUT_MS,
  CONNECT_TIMEOUT_MS,
  createClient,
  isConnectionError,
  REFUSED_RE,
  refreshSlots,
  type Client,
  type RedisTarget,
} from './connection.js'
import { KeepAlive } from './keep-alive.js'

/**
 * How long `open()` waits for a Cluster that it reached but that is not ready yet (a failover under
 * way: Redis's default `cluster-node-timeout` is 15 s, and the election takes a little more).
 */
const CLUSTER_READY_TIMEOUT_MS = 30_000

/** A Cluster reached but not ready by the deadline. */
class NotReadyError extends Error {}

/** The retriable `ConnectionError` of a Cluster not ready by the deadline, with its last failure. */
function notReady(target: RedisTarget, last: Error | undefined): ConnectionError {
  return new ConnectionError(
    `Cannot connect to Redis at ${redact(target.url)}: the cluster was not ready within ${CLUSTER_READY_TIMEOUT_MS} ms (a failover under way?)${last ? `; its last failure: ${last.message}` : ''}`,
    { cause: last, retriable: true },
  )
}

/**
 * The Redis backend's command client, connected and checked: the prefix, the connection (with the
 * real reason when it fails), the URL's database and the user's rights.
 */
export async function openClient(target: RedisTarget, prefix: string): Promise<Client> {
  if (typeof prefix !== 'string' || prefix.length > 1000) {
    throw new InvalidArgumentError(`prefix must be a string of at most 1000 characters, got ${JSON.stringify(prefix)}`)
  }
  // Every key's hash tag is twainmq's (`{topic:partition}`, `{group}`): a brace in the prefix would
  // make Redis hash the prefix instead, one slot for everything (or CROSSSLOT in scripts) on a Cluster.
  if (/[{}]/.test(prefix))
    throw new InvalidArgumentError(
      `prefix cannot contain "{" or "}" (Redis Cluster hash tags), got ${JSON.stringify(prefix)}`,
    )
  const client = createClient(target)
  const deadline = Date.now() + CLUSTER_READY_TIMEOUT_MS
  await connect(client, target, deadline)
  await checkDatabase(client, target)
  await checkAccess(client, target, prefix, deadline)
  return client
}

/**
 * A second command client for appends that wait for replicas (`replicaAcks`), so the waits hold up
 * nothing else. On a Cluster its commands keep the 1.5 s timeout (`WAIT`s are issued in shorter slices).
 */
export async function openWriter(base: Client, target: RedisTarget): Promise<Client> {
  // A command cut by a dropped connection is not re-sent on the next one: a WAIT re-sent alone
  // would count that connection's writes, not the batch's (the appender re-sends the whole window).
  const noResend = { autoResendUnfulfilledCommands: false }
  const writer: Client =
    base instanceof Cluster
      ? refreshSlots(
          base.duplicate(undefined, {
            redisOptions: { ...base.options.redisOptions, ...noResend, commandTimeout: CLUSTER_COMMAND_TIMEOUT_MS },
          }),
        )
      : base.duplicate(noResend)
  await connect(writer, target, Date.now() + CLUSTER_READY_TIMEOUT_MS)
  await checkDatabase(writer, target)
  return writer
}

/** Connect; a Cluster not ready yet is waited for until `deadline` (ms since the epoch). */
async function connect(client: Client, target: RedisTarget, deadline: number): Promise<void> {
  client.on('error', () => undefined) // failures reach callers as rejected commands; ioredis reconnects
  new KeepAlive(client).trackCommands()
  // connect() rejects with "Connection is closed."; the real cause comes as an 'error' event.
  const failures: Error[] = []
  const onFailure = (e: Error) => void failures.push(e)
  client.on('error', onFailure).on('node error', onFailure)
  try {
    await ready(client, deadline)
  } catch (cause) {
    client.disconnect()
    if (cause instanceof NotReadyError) throw notReady(target, failures.at(-1))
    throw connectError(target.url, failures[0], cause, CONNECT_TIMEOUT_MS)
  } finally {
    client.off('error', onFailure).off('node error', onFailure)
  }
}

/**
 * The client connected and ready. A Cluster whose ready check fails (`CLUSTER INFO` sent to a
 * master that just died, or answered `cluster_state:fail` during a failover) reconnects by itself
 * but drops the promise of `connect()`, which then never settles: the 'ready' event settles it
 * instead, and a deadline bounds the wait (its timer also holds the process meanwhile: the idle
 * sockets do not, keep-alive.ts).
 */
async function ready(client: Client, deadline: number): Promise<void> {
  if (!(client instanceof Cluster)) return client.connect()
  await new Promise<void>((resolve, reject) => {
    const done = (): void => {
      clearTimeout(timer)
      client.off('ready', onReady)
    }
    const onReady = (): void => {
      done()
      resolve()
    }
    const timer = setTimeout(
      () => {
        done()
        reject(new NotReadyError())
      },
      Math.max(0, deadline - Date.now()),
    )
    client.once('ready', onReady)
    client.connect().then(onReady, (e: unknown) => {
      done()
      reject(e)
    })
  })
}

/**
 * ioredis selects the URL's database on connect but goes on with database 0 when the server refuses
 * it (`/99` on a server with 16): selecting it once more, awaited, turns that into an error.
 */
async function checkDatabase(client: Client, target: RedisTarget): Promise<void> {
  if (target.cluster) return
  const db = new URL(target.url).pathname.replace(/^\//, '')
  if (db === '' || db === '0') return
  try {
    await (client as Extract<Client, { select: unknown }>).select(Number(db))
  } catch (cause) {
    client.disconnect()
    throw new InvalidArgumentError(
      `Redis at ${redact(target.url)} has no database ${db} (${(cause as Error).message}): see its \`databases\` setting`,
      { cause },
    )
  }
}

/**
 * An ACL user without rights on the prefix's keys or on scripts connects fine and fails at its first
 * command: find out now, with the server's NOPERM reason (the probes read nothing and write nothing).
 * On a Cluster failing over (the probed key's master dead, not yet replaced: "Too many Cluster
 * redirections", CLUSTERDOWN) the probes are tried again until `deadline`.
 */
async function checkAccess(client: Client, target: RedisTarget, prefix: string, deadline: number): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await client.exists(`${prefix}topics`)
      await client.script('EXISTS', '0'.repeat(40))
      return
    } catch (cause) {
      const e = cause instanceof Error ? cause : undefined
      const transient = client instanceof Cluster && isConnectionError(cause) && !REFUSED_RE.test(e?.message ?? '')
      if (transient && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, Math.min(50 * attempt, 500)))
        continue
      }
      client.disconnect()
      throw transient ? notReady(target, e) : connectError(target.url, e, cause, CONNECT_TIMEOUT_MS)
    }
  }
}
