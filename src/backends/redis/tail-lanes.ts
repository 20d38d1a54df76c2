import { randomBytes } from 'node:crypto'
import { Cluster, Redis } from 'ioredis'
import type { Client } from './connection.js'
import { KeepAlive } from './keep-alive.js'

/** The node key of the only node of one Redis. */
const SINGLE = 'single'
/** Reconnect delays of a lane: 50 ms doubling to 2 s. */
const retryStrategy = (times: number): number => Math.min(50 * 2 ** Math.min(times - 1, 6), 2000)
/** Per process: lane connection names `twainmq:tail:<run>:<n>`, so a lane can be found in `CLIENT LIST`. */
const RUN = randomBytes(4).toString('hex')
let counter = 0

/** One connection to one node carrying at most one blocking read at a time. */
export interface Lane {
  readonly node: string
  readonly conn: Redis
  readonly name: string
  /** `CLIENT ID` of the connection as last asked (a reconnect changes it). */
  id: number | undefined
  busy: boolean
  /** How often its connection closed (a read across a close may have met a restarted server). */
  closes: number
  /** `prune()` calls that found it idle in a row. */
  idleTicks: number
  readonly keepAlive: KeepAlive
  /** Settle the commands in flight on it with this error (it was dropped, see {@link TailLanes.run}). */
  readonly waiting: Set<(e: Error) => void>
  /** Set once the lane was dropped: commands given to `run` after that fail with it at once. */
  dropped: Error | undefined
}

/**
 * The blocking connections of a backend's tails, pooled per node: a read takes an idle lane of its
 * node (or opens one), so a node has as many connections as reads wait on it at once — one per
 * slot group watched there (watcher.ts), independent of the partition count. On a Cluster a lane is
 * a plain connection to the master serving the slot now (from the command client's slot map, which
 * is refreshed every second); a read that meets a moved slot fails and is re-issued on the new
 * master's lane.
 */
export class TailLanes {
  private readonly lanes = new Map<string, Lane[]>()
  private pinned = false

  constructor(private readonly base: Client) {}

  /** The node serving a slot now (undefined while the slot map does not know it). */
  nodeOf(slot: number): string | undefined {
    if (!(this.base instanceof Cluster)) return SINGLE
    return this.base.slots[slot]?.[0]
  }

  /** An idle lane to `node`, now busy. */
  acquire(node: string): Lane {
    let list = this.lanes.get(node)
    if (!list) this.lanes.set(node, (list = []))
    let lane = list.find((l) => !l.busy)
    if (!lane) {
      lane = this.open(node)
      list.push(lane)
    }
    lane.busy = true
    return lane
  }

  private open(node: string): Lane {
    const name = `twainmq:tail:${RUN}:${++counter}`
    let conn: Redis
    if (this.base instanceof Cluster) {
      const at = node.lastIndexOf(':')
      const { username, password, protocol, connectTimeout, disableClientInfo } = this.base.options.redisOptions ?? {}
      // No command timeout (a blocked read waits by design); a read on a node that stopped answering
      // fails once its BLOCK time and a grace have passed (`guard`), and is re-issued where the slot
      // is now. Not ioredis's `blockingTimeout`: its timer is not unref'd, so a blocked read of a
      // non-persistent reader would hold the process.
      conn = new Redis({
        host: node.slice(0, at),
        port: Number(node.slice(at + 1)),
        username,
        password,
        protocol,
        connectTimeout,
        disableClientInfo,
        connectionName: name,
        maxRetriesPerRequest: null,
        retryStrategy,
        enableAutoPipelining: false,
      })
    } else
      conn = this.base.duplicate({
        lazyConnect: false,
        enableAutoPipelining: false,
        maxRetriesPerRequest: null,
        connectionName: name,
      })
    conn.on('error', () => undefined) // failures surface as rejected reads
    const lane: Lane = {
      node,
      conn,
      name,
      id: undefined,
      busy: false,
      closes: 0,
      idleTicks: 0,
      keepAlive: new KeepAlive(conn),
      waiting: new Set(),
      dropped: undefined,
    }
    lane.keepAlive.pin(this.pinned)
    conn.on('close', () => {
      lane.id = undefined
      lane.closes++
    })
    return lane
  }

  /**
   * Close the lane if its read has not returned within `ms` (a node that stopped answering, or a
   * read whose reply was lost with a killed connection), so the read is issued again on a fresh
   * lane; the timer is unref'd. Returns the cancel function.
   */
  guard(lane: Lane, ms: number): () => void {
    const t = setTimeout(() => this.drop(lane), ms)
    t.unref()
    return () => clearTimeout(t)
  }

  /**
   * A command on a lane, settled when the lane is dropped at the latest: ioredis settles nothing
   * queued on a connection that `disconnect()` finds between two reconnect attempts (to a node
   * killed or gone), so a read or `CLIENT ID` there would wait for ever (a tail stalled after a
   * master was killed: its slot group waited on a `CLIENT ID` to the dead node).
   * Not a `Promise.race` with a promise of the lane's life: every race would leave a reaction on it
   * holding its reply until the lane closes (a tail on a quiet topic kept every reply it read).
   */
  run<T>(lane: Lane, command: Promise<T>): Promise<T> {
    if (lane.dropped) {
      command.catch(() => undefined)
      return Promise.reject(lane.dropped)
    }
    return new Promise<T>((resolve, reject) => {
      lane.waiting.add(reject)
      command.then(
        (v) => {
          lane.waiting.delete(reject)
          resolve(v)
        },
        (e: unknown) => {
          lane.waiting.delete(reject)
          reject(e)
        },
      )
    })
  }

  /** Ask a lane's `CLIENT ID` (before a read is written on it). */
  async identify(lane: Lane): Promise<void> {
    if (lane.id === undefined) lane.id = Number(await this.run(lane, lane.conn.client('ID')))
  }

  /** The lane's read is done: keep the lane for the next read, or close it. */
  release(lane: Lane, keep: boolean): void {
    lane.busy = false
    if (!keep) this.drop(lane)
  }

  /** Close a lane at once (a read on it ends). */
  drop(lane: Lane): void {
    lane.conn.disconnect()
    lane.dropped ??= new Error(`The blocking connection to ${lane.node} was closed`)
    for (const reject of lane.waiting) reject(lane.dropped)
    lane.waiting.clear()
    const list = this.lanes.get(lane.node)
    const i = list?.indexOf(lane) ?? -1
    if (list && i >= 0) list.splice(i, 1)
    if (list?.length === 0) this.lanes.delete(lane.node)
  }

  /** End the blocked read of a lane so it is re-issued (`CLIENT UNBLOCK` from the command client); false when none was blocked. */
  async unblock(lane: Lane): Promise<boolean> {
    const via =
      this.base instanceof Cluster
        ? this.base.nodes('master').find((n) => `${n.options.host}:${n.options.port}` === lane.node)
        : this.base
    if (!via) return false
    let done = lane.id === undefined ? 0 : Number(await via.client('UNBLOCK', lane.id))
    if (done === 0 && lane.busy) {
      // Reconnected since its id was asked (ioredis re-sent the read): find it by name.
      const line = String(await via.client('LIST'))
        .split('\n')
        .find((l) => l.includes(` name=${lane.name} `))
      const id = line ? /\bid=(\d+)/.exec(line)?.[1] : undefined
      if (id) done = Number(await via.client('UNBLOCK', id))
    }
    return done > 0
  }

  /**
   * Close the lanes found idle by this call and the previous one (a slot group takes a lane back
   * within moments of each read, so such a lane serves no group: one whose node lost its slots to
   * a failover or a migration, or of a group that ended between reads).
   */
  prune(): void {
    for (const list of [...this.lanes.values()]) {
      for (const l of [...list]) {
        if (l.busy) l.idleTicks = 0
        else if (++l.idleTicks >= 2) this.drop(l)
      }
    }
  }

  /** Hold the process while a persistent reader waits. */
  pin(on: boolean): void {
    this.pinned = on
    for (const list of this.lanes.values()) for (const l of list) l.keepAlive.pin(on)
  }

  /** Close every lane. */
  close(): void {
    for (const list of [...this.lanes.values()]) for (const l of [...list]) this.drop(l)
  }
}
