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
    await client.connect()
  } catch (cause) {
    client.disconnect()
    throw connectError(target.url, failures[0], cause, CONNECT_TIMEOUT_MS)
  } finally {
    client.off('error', onFailure).off('node error', onFailure)
  }
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
