import { Cluster, type Redis } from 'ioredis'
import type { Client } from './connection.js'

type Socket = { ref(): unknown; unref(): unknown }
type Sender = Redis & { sendCommand(c: { promise: Promise<unknown> }, s?: unknown): unknown }

/** The socket of a connection, once it has one. */
function socketOf(conn: Redis): Socket | undefined {
  const s = (conn as unknown as { stream?: Socket }).stream
  return s && typeof s.unref === 'function' ? s : undefined
}

/**
 * The connection a Cluster client subscribes on (ioredis keeps it apart from the node pool and
 * replaces it when its node goes away); undefined before it has one.
 */
function clusterSubscriber(c: Cluster): Redis | undefined {
  return (c as unknown as { subscriber?: { getInstance?(): Redis | null } }).subscriber?.getInstance?.() ?? undefined
}

/**
 * Whether a client's sockets keep the process alive. A Redis socket is a live handle even when
 * idle; twainmq lets a script that forgets `close()` exit like the file backend does: the command
 * client holds the process only while commands are in flight, a blocking client only while a
 * persistent reader uses it. A Cluster client is handled node by node: every node connection it
 * has or opens later (`+node`), and its pub/sub connection, follow the same rule.
 */
export class KeepAlive {
  private readonly nodes = new Set<Redis>()
  private busy = 0
  private pinned = false
  private tracking = false

  constructor(client: Client) {
    if (client instanceof Cluster) {
      const subscriber = (): void => {
        const s = clusterSubscriber(client)
        if (s) this.attach(s)
      }
      for (const n of client.nodes('all')) this.attach(n)
      // ioredis picks the subscriber connection on a node event, after this listener has run.
      client.on('+node', (n: Redis) => {
        this.attach(n)
        setImmediate(subscriber)
      })
      client.on('ready', subscriber)
    } else this.attach(client)
  }

  private attach(conn: Redis): void {
    if (this.nodes.has(conn)) return
    this.nodes.add(conn)
    conn.on('connect', () => this.applyTo(conn))
    conn.on('ready', () => this.applyTo(conn))
    conn.once('end', () => this.nodes.delete(conn))
    if (this.tracking) this.track(conn)
    this.applyTo(conn)
  }

  /** Count every command the client sends (the command client). */
  trackCommands(): this {
    if (!this.tracking) {
      this.tracking = true
      for (const n of this.nodes) this.track(n)
    }
    return this
  }

  private track(conn: Redis): void {
    const redis = conn as Sender
    const send = redis.sendCommand.bind(redis) as (c: { promise: Promise<unknown> }, s?: unknown) => unknown
    const done = (): void => {
      if (--this.busy === 0) this.apply()
    }
    redis.sendCommand = (command, stream) => {
      if (this.busy++ === 0) this.apply()
      command.promise.then(done, done)
      return send(command, stream)
    }
  }

  /** Hold the process while `on` (a persistent reader). */
  pin(on: boolean): void {
    if (on !== this.pinned) {
      this.pinned = on
      this.apply()
    }
  }

  private apply(): void {
    for (const n of this.nodes) this.applyTo(n)
  }

  private applyTo(conn: Redis): void {
    const s = socketOf(conn)
    if (!s) return
    if (this.pinned || this.busy > 0) s.ref()
    else s.unref()
  }
}
