import { createDedicated, type Client } from './connection.js'
import { KeepAlive } from './keep-alive.js'
import type { MemberPartition } from './shared-entries.js'

/** `XREADGROUP` reply (RESP2, Buffers): per stream, its entries. */
export type XReadGroupReply = Array<[Buffer, Array<[Buffer, Buffer[] | null]>]> | null

/**
 * Blocking `XREADGROUP … >` reads of new entries over some partition streams of a member, on a
 * dedicated connection (a blocked read holds its connection). On one Redis a member has one reader
 * over every partition of its topics (one command, one connection); on a Cluster one reader per
 * slot of its partitions, because the streams of one command must share a slot (one per master and
 * topic for topics placed at creation, one per partition for older ones). `stop()` disconnects, which ends a blocked read at once; after a dropped
 * connection ioredis reconnects and re-sends the read.
 */
export class GroupReader {
  private readonly conn: Client
  private readonly keepAlive: KeepAlive
  /** The read under way, if any. */
  pending: Promise<XReadGroupReply> | undefined
  /** It finished (its result is waiting to be collected). */
  done = false
  result: XReadGroupReply = null
  error: unknown
  /** COUNT of the read under way. */
  count = 0
  private stopped = false

  constructor(
    base: Client,
    readonly parts: readonly MemberPartition[],
  ) {
    this.conn = createDedicated(base, 'twainmq:shared')
    this.conn.on('error', () => undefined) // failures surface as rejected reads; ioredis reconnects
    this.keepAlive = new KeepAlive(this.conn)
  }

  /** Start a read of up to `count` new entries per partition, blocking up to `blockMs`; `onDone` runs when it settles. */
  start(group: string, member: string, count: number, blockMs: number, onDone: () => void): void {
    const keys = this.parts.map((p) => p.key)
    const args: Array<string | number> = ['GROUP', group, member, 'COUNT', count, 'BLOCK', blockMs, 'STREAMS', ...keys]
    for (let i = 0; i < keys.length; i++) args.push('>')
    this.done = false
    this.result = null
    this.error = undefined
    this.count = count
    const read = (this.conn as Client).callBuffer('XREADGROUP', ...args) as Promise<XReadGroupReply>
    this.pending = read
    read.then(
      (r) => {
        if (this.pending !== read) return
        this.result = r
        this.done = true
        onDone()
      },
      (e: unknown) => {
        if (this.pending !== read) return
        this.error = e
        this.done = true
        onDone()
      },
    )
  }

  /** Take the finished read's reply (or throw its failure) and get ready for the next read. */
  collect(): XReadGroupReply {
    const { result, error } = this
    this.pending = undefined
    this.done = false
    this.result = null
    this.error = undefined
    if (error !== undefined) throw error
    return result
  }

  /** Keep the process alive while it reads (a live iteration of the consumer). */
  pin(on: boolean): void {
    if (!this.stopped) this.keepAlive.pin(on)
  }

  /** Disconnect at once (a blocked read ends now). */
  stop(): void {
    if (this.stopped) return
    this.stopped = true
    this.pending = undefined
    this.keepAlive.pin(false)
    this.conn.disconnect()
  }
}
