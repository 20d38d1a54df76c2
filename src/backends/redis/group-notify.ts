import { createDedicated, type Client } from './connection.js'
import { KeepAlive } from './keep-alive.js'

interface Listener {
  onChange: () => void
  persistent: boolean
}

/**
 * Change notices of consumer groups over Redis pub/sub: members publish on the group's channel
 * after they join, leave, take or release leases, so the others run a coordination step at once
 * (joins take milliseconds, not a heartbeat interval). One subscriber connection per backend
 * instance, opened on the first watch and closed with the last; heartbeats cover lost notices.
 */
export class GroupNotifier {
  private conn: Client | undefined
  private keepAlive: KeepAlive | undefined
  private readonly channels = new Map<string, Set<Listener>>()
  private closed = false

  constructor(private readonly base: Client) {}

  watch(channel: string, onChange: () => void, persistent: boolean): () => void {
    if (this.closed) return () => undefined
    if (!this.conn) {
      const conn = createDedicated(this.base, 'twainmq:groups')
      conn.on('error', () => undefined)
      conn.on('message', (ch: string) => {
        for (const l of [...(this.channels.get(ch) ?? [])]) {
          try {
            l.onChange()
          } catch {
            /* the listener's own failure */
          }
        }
      })
      this.conn = conn
      this.keepAlive = new KeepAlive(conn)
    }
    let set = this.channels.get(channel)
    if (!set) {
      set = new Set()
      this.channels.set(channel, set)
      void this.conn.subscribe(channel).catch(() => undefined)
    }
    const l: Listener = { onChange, persistent }
    set.add(l)
    this.pin()
    const listeners = set
    return () => {
      if (!listeners.delete(l)) return
      this.pin()
      if (listeners.size > 0) return
      // Unsubscribe after the current task unless someone watches again at once.
      queueMicrotask(() => {
        if (listeners.size > 0 || this.channels.get(channel) !== listeners) return
        this.channels.delete(channel)
        if (this.channels.size === 0) this.disconnect()
        else void this.conn?.unsubscribe(channel).catch(() => undefined)
      })
    }
  }

  private pin(): void {
    let on = false
    for (const set of this.channels.values()) for (const l of set) on ||= l.persistent
    this.keepAlive?.pin(on)
  }

  private disconnect(): void {
    this.conn?.disconnect()
    this.conn = undefined
    this.keepAlive = undefined
  }

  close(): void {
    this.closed = true
    this.channels.clear()
    this.disconnect()
  }
}
