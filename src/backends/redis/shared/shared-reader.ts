import { Cluster } from 'ioredis'
import type { SharedDelivery } from '../../shared.js'
import { createDedicated, type Client } from '../connection.js'
import { KeepAlive } from '../keep-alive.js'
import type { MemberPartition } from './shared-entries.js'

/** `XREADGROUP` reply (RESP2, Buffers): per stream, its entries. */
export type XReadGroupReply = Array<[Buffer, Array<[Buffer, Buffer[] | null]>]> | null

/**
 * How long past its BLOCK time a read may go unanswered before the reader gives up its connection
 * (a frozen or cut-off node answers nothing and keeps the connection open).
 */
export const READ_GRACE_MS = 1000

/**
 * Blocking `XREADGROUP … >` reads of new entries over some partition streams of a member, on a
 * dedicated connection (a blocked read holds its connection). On one Redis a member has one reader
 * over every partition of its topics (one command, one connection); on a Cluster one reader per
 * slot of its partitions, because the streams of one command must share a slot (one per master and
 * topic for topics placed at creation, one per partition for older ones). `stop()` disconnects,
 * which ends a blocked read at once.
 *
 * A reply is taken (its entries held) the moment it arrives, not when the member next asks. A read
 * whose reply may have been executed by Redis and not reached the member — it failed, the
 * connection dropped or reconnected, or it went unanswered {@link READ_GRACE_MS} past its BLOCK
 * time (the connection is then replaced) — is reported through `doubt`: Redis may count entries as
 * the member's that it never saw (decision 181). Unlike ioredis's `blockingTimeout`, the reader
 * never ends a read whose connection is still there: a reply answered late is still taken.
 */
export class GroupReader {
  private conn: Client
  private keepAlive: KeepAlive
  /** The read under way, if any. */
  pending: Promise<XReadGroupReply> | undefined
  /** It finished (its deliveries are waiting to be collected). */
  done = false
  /** Deliveries of the finished read. */
  private got: SharedDelivery[] = []
  error: unknown
  /** COUNT of the read under way. */
  count = 0
  /** The finished read filled its count on some partition (a backlog). */
  full = false
  private stopped = false
  private pinned = false
  private watchdog: NodeJS.Timeout | undefined

  constructor(
    private readonly base: Client,
    readonly parts: readonly MemberPartition[],
    /** A read's reply may have been lost: look at the partitions' own pending entries. */
    private readonly doubt: () => void,
  ) {
    ;[this.conn, this.keepAlive] = this.connect()
  }

  private connect(): [Client, KeepAlive] {
    const conn = createDedicated(this.base, 'twainmq:shared', { blockingTimeout: false })
    conn.on('error', () => undefined) // failures surface as rejected reads; ioredis reconnects
    // A dropped connection: a read under way may have run, its reply lost (ioredis sends it again).
    const lost = (): void => {
      if (!this.stopped) this.doubt()
    }
    conn.on('reconnecting', lost)
    if (conn instanceof Cluster) {
      conn.on('-node', lost)
      conn.on('node error', lost)
    }
    const keepAlive = new KeepAlive(conn)
    keepAlive.pin(this.pinned)
    return [conn, keepAlive]
  }

  /**
   * Start a read of up to `count` new entries per partition, blocking up to `blockMs`: `take` turns
   * its reply into deliveries when it arrives, `onDone` runs when it settles.
   */
  start(
    group: string,
    member: string,
    count: number,
    blockMs: number,
    take: (reply: XReadGroupReply, reader: GroupReader) => SharedDelivery[],
    onDone: () => void,
  ): void {
    const keys = this.parts.map((p) => p.key)
    const args: Array<string | number> = ['GROUP', group, member, 'COUNT', count, 'BLOCK', blockMs, 'STREAMS', ...keys]
    for (let i = 0; i < keys.length; i++) args.push('>')
    this.done = false
    this.got = []
    this.full = false
    this.error = undefined
    this.count = count
    const read = (this.conn as Client).callBuffer('XREADGROUP', ...args) as Promise<XReadGroupReply>
    this.pending = read
    const settle = (error: unknown, got: SharedDelivery[]): void => {
      clearTimeout(this.watchdog)
      this.watchdog = undefined
      this.got = got
      this.error = error
      this.done = true
      onDone()
    }
    read.then(
      (r) => {
        if (this.pending !== read) return
        let got: SharedDelivery[] = []
        let error: unknown
        try {
          got = take(r, this)
        } catch (e) {
          error = e
        }
        settle(error, got)
      },
      (e: unknown) => {
        if (this.pending !== read) return
        this.doubt() // it may have run on the server before failing here
        settle(e, [])
      },
    )
    this.watchdog = setTimeout(() => {
      if (this.pending !== read || this.stopped) return
      // Unanswered long past its BLOCK time: a new connection (its reply, if one comes, cannot be
      // taken any more, so the partitions are looked at for entries it may have read).
      const old = this.conn
      ;[this.conn, this.keepAlive] = this.connect()
      this.pending = undefined
      old.disconnect()
      this.doubt()
      settle(undefined, [])
    }, blockMs + READ_GRACE_MS)
    this.watchdog.unref()
  }

  /** Take the finished read's deliveries (or throw its failure) and get ready for the next read. */
  collect(): SharedDelivery[] {
    const { got, error } = this
    this.pending = undefined
    this.done = false
    this.got = []
    this.error = undefined
    if (error !== undefined) throw error
    return got
  }

  /** Keep the process alive while it reads (a live iteration of the consumer). */
  pin(on: boolean): void {
    this.pinned = on
    if (!this.stopped) this.keepAlive.pin(on)
  }

  /** Disconnect at once (a blocked read ends now). */
  stop(): void {
    if (this.stopped) return
    this.stopped = true
    this.pending = undefined
    clearTimeout(this.watchdog)
    this.keepAlive.pin(false)
    this.conn.disconnect()
  }
}
