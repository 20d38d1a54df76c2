import { Cluster } from 'ioredis'
import { InvalidArgumentError } from '../../core/errors.js'
import { connectError, redact } from './connect-error.js'
import {
  CLUSTER_COMMAND_TIMEOUT_MS,
  CONNECT_TIMEOUT_MS,
  createClient,
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

/** A Cluster reached but not ready by the deadline (the cause of the `ConnectionError`, retriable). */
class NotReadyError extends Error {}

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
  await connect(client, target)
  await checkDatabase(client, target)
  await checkAccess(client, target, prefix)
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
  await connect(writer, target)
  await checkDatabase(writer, target)
  return writer
}

async function connect(client: Client, target: RedisTarget): Promise<void> {
  client.on('error', () => undefined) // failures reach callers as rejected commands; ioredis reconnects
  new KeepAlive(client).trackCommands()
  // connect() rejects with "Connection is closed."; the real cause comes as an 'error' event.
  const failures: Error[] = []
  const onFailure = (e: Error) => void failures.push(e)
  client.on('error', onFailure).on('node error', onFailure)
  try {
    await ready(client)
  } catch (cause) {
    client.disconnect()
    if (cause instanceof NotReadyError) {
      const last = failures.at(-1)
      cause.message += last ? ` (its last failure: ${last.message})` : ''
      throw connectError(target.url, undefined, cause, CONNECT_TIMEOUT_MS)
    }
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
async function ready(client: Client): Promise<void> {
  if (!(client instanceof Cluster)) return client.connect()
  await new Promise<void>((resolve, reject) => {
    const done = (): void => {
      clearTimeout(deadline)
      client.off('ready', onReady)
    }
    const onReady = (): void => {
      done()
      resolve()
    }
    const deadline = setTimeout(() => {
      done()
      reject(new NotReadyError(`the cluster was not ready within ${CLUSTER_READY_TIMEOUT_MS} ms`))
    }, CLUSTER_READY_TIMEOUT_MS)
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
 */
async function checkAccess(client: Client, target: RedisTarget, prefix: string): Promise<void> {
  try {
    await client.exists(`${prefix}topics`)
    await client.script('EXISTS', '0'.repeat(40))
  } catch (cause) {
    client.disconnect()
    throw connectError(target.url, cause instanceof Error ? cause : undefined, cause, CONNECT_TIMEOUT_MS)
  }
}
