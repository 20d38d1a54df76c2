import { existsSync, watch as fsWatch, type FSWatcher as NodeWatcher } from 'node:fs'
import { basename } from 'node:path'
import { watch as chokidarWatch, type FSWatcher as ChokidarWatcher } from 'chokidar'
import { SEGMENT_EXT } from './layout.js'

interface Entry {
  /** Listener → whether it keeps the process alive. */
  listeners: Map<() => void, boolean>
  /** How many listeners are persistent (kept, not recounted: a tail of 10,000 partitions subscribes 10,000 times). */
  persistent: number
  /** Undefined when it could not start or failed: then the poll tick is this directory's only source. */
  raw: NodeWatcher | undefined
  /** The directory was removed (its topic deleted): the poll tick tries to watch it again. */
  gone: boolean
  /** Started while at least one listener is persistent (chokidar cannot be unref'd). */
  chokidar: ChokidarWatcher | undefined
  suffix: string
}

/**
 * Directories that get a chokidar watcher besides the raw one. chokidar adds a directory read, a
 * watch per file and a few hundred objects per directory: for a tail over 10,000 partitions that
 * is 20,000 inotify watches and seconds of set-up, for events the raw watch already delivers
 * (inotify on a directory reports changes to the files in it). Beyond this many, the raw watch and
 * the poll tick remain.
 */
const CHOKIDAR_MAX_DIRS = 64

/**
 * Directories woken per poll tick when the raw watch works for them. Up to this many, every
 * directory is woken on every tick; beyond it, the tick works through them in slices (at 10,000
 * directories each is polled every 10 ticks) rather than make every tail read every partition four
 * times a second. Directories without a working raw watch are woken on every tick.
 */
const POLL_SLICE = 1000

/** Options of the watch hub. */
export interface WatchHubOptions {
  /** Safety-net poll interval. @default 250 */
  pollMs?: number
}

/**
 * One set of watchers per partition directory, shared by every tail of this process, started by
 * the first subscriber and closed with the last.
 *
 * Three sources wake tails (a wake means "read again"; spurious ones are harmless):
 * - a raw `fs.watch` (inotify) on the directory: sub-millisecond notice of appends by other processes;
 * - chokidar on the directory (the first `CHOKIDAR_MAX_DIRS` of them): new and removed segments.
 *   Its `change` events are throttled to one per 50 ms per path and drop the rest, so it cannot be
 *   the latency path on its own;
 * - a poll tick (`pollMs`) in case an event is lost (network file systems, overflowed queues),
 *   in slices of `POLL_SLICE` directories when more are watched.
 * Appends by this process wake tails directly through {@link WatchHub.notify}.
 */
export class WatchHub {
  private readonly entries = new Map<string, Entry>()
  private timer: NodeJS.Timeout | undefined
  private readonly pollMs: number
  /** Entries with a persistent listener (the timer is ref'd while there are any). */
  private persistentEntries = 0
  /** Entries with a chokidar watcher. */
  private chokidars = 0
  /** Where the next sliced poll tick starts. */
  private pollFrom = 0

  constructor(options: WatchHubOptions = {}) {
    this.pollMs = options.pollMs ?? 250
  }

  /**
   * Watch `dir` for changes to files ending in `suffix` (segments by default). A non-persistent
   * listener does not keep the process alive (consumers nobody iterates use that).
   */
  subscribe(dir: string, listener: () => void, suffix = SEGMENT_EXT, persistent = true): () => void {
    let e = this.entries.get(dir)
    if (!e) {
      e = this.start(dir, suffix)
      this.entries.set(dir, e)
    }
    this.setListener(e, listener, persistent)
    this.reconcile(dir, e)
    let done = false
    return () => {
      if (done) return
      done = true
      const cur = this.entries.get(dir)
      if (!cur) return
      this.setListener(cur, listener, undefined)
      if (cur.listeners.size === 0) {
        this.entries.delete(dir)
        this.stop(cur)
      } else this.reconcile(dir, cur)
      if (this.entries.size === 0 && this.timer) {
        clearInterval(this.timer)
        this.timer = undefined
      } else this.reconcileTimer()
    }
  }

  /** Add (`persistent` true/false) or remove (undefined) a listener, keeping the persistent counts. */
  private setListener(e: Entry, listener: () => void, persistent: boolean | undefined): void {
    const before = e.persistent > 0
    if (e.listeners.get(listener)) e.persistent--
    if (persistent === undefined) e.listeners.delete(listener)
    else e.listeners.set(listener, persistent)
    if (persistent) e.persistent++
    this.persistentEntries += Number(e.persistent > 0) - Number(before)
  }

  /** Keep handles referenced only while some listener is persistent. */
  private reconcile(dir: string, e: Entry): void {
    if (e.persistent > 0) {
      e.raw?.ref()
      if (!e.chokidar && this.chokidars < CHOKIDAR_MAX_DIRS) {
        e.chokidar = this.startChokidar(dir, e.suffix)
        this.chokidars++
      }
    } else {
      e.raw?.unref()
      this.stopChokidar(e)
    }
    this.reconcileTimer()
  }

  private reconcileTimer(): void {
    this.timer ??= setInterval(() => this.tick(), this.pollMs)
    if (this.persistentEntries > 0) this.timer.ref()
    else this.timer.unref()
  }

  /** Wake the tails of `dir` (a local append). */
  notify(dir: string): void {
    const e = this.entries.get(dir)
    if (e) for (const l of e.listeners.keys()) l()
  }

  private fire(dir: string): void {
    this.notify(dir)
  }

  private tick(): void {
    const n = this.entries.size
    const slice = Math.min(n, POLL_SLICE)
    const from = this.pollFrom % Math.max(n, 1)
    let i = 0
    for (const [dir, e] of this.entries) {
      // Position relative to this tick's slice [from, from + slice), wrapping around.
      const k = (i++ - from + n) % n
      if (e.gone) this.rewatch(dir, e)
      if (k < slice || e.raw === undefined) for (const l of e.listeners.keys()) l()
    }
    this.pollFrom = from + slice
  }

  private start(dir: string, suffix: string): Entry {
    const e: Entry = { listeners: new Map(), persistent: 0, raw: undefined, gone: false, chokidar: undefined, suffix }
    e.raw = this.startRaw(dir, e)
    return e
  }

  /** The raw watch of `dir`; undefined when the directory is gone or inotify is out of watches. */
  private startRaw(dir: string, e: Entry): NodeWatcher | undefined {
    let raw: NodeWatcher
    const self = basename(dir)
    try {
      raw = fsWatch(dir, { persistent: true }, (_event, name) => {
        if (name === self && !existsSync(dir)) {
          // The directory itself was removed: its watch is dead. Re-watch it when it is created again.
          this.dropRaw(e, raw)
          e.gone = true
        }
        if (name === null || name === self || String(name).endsWith(e.suffix)) this.fire(dir)
      })
    } catch {
      return undefined // directory gone or inotify limit: chokidar and the poll tick remain
    }
    raw.on('error', () => this.dropRaw(e, raw)) // the poll tick keeps tails going, on every tick from now on
    return raw
  }

  private dropRaw(e: Entry, raw: NodeWatcher): void {
    if (e.raw === raw) e.raw = undefined
    raw.close()
  }

  /** A removed directory exists again (its topic created anew): watch it again and wake its tails. */
  private rewatch(dir: string, e: Entry): void {
    if (!existsSync(dir)) return
    e.gone = false
    e.raw = this.startRaw(dir, e)
    if (e.persistent === 0) e.raw?.unref()
    if (e.chokidar) {
      this.stopChokidar(e)
      this.reconcile(dir, e)
    }
  }

  private startChokidar(dir: string, suffix: string): ChokidarWatcher {
    const chokidar = chokidarWatch(dir, {
      ignoreInitial: true,
      depth: 0,
      persistent: true,
      ignored: (p: string) => p !== dir && !p.endsWith(suffix),
    })
    chokidar.on('add', () => this.fire(dir))
    chokidar.on('change', () => this.fire(dir))
    chokidar.on('error', () => {
      /* the poll tick keeps tails going */
    })
    return chokidar
  }

  private stopChokidar(e: Entry): void {
    if (!e.chokidar) return
    closeChokidar(e.chokidar)
    e.chokidar = undefined
    this.chokidars--
  }

  private stop(e: Entry): void {
    e.raw?.close()
    this.stopChokidar(e)
    if (e.persistent > 0) this.persistentEntries--
    e.persistent = 0
  }

  /** Close every watcher and the timer. */
  close(): void {
    for (const e of this.entries.values()) this.stop(e)
    this.entries.clear()
    if (this.timer) clearInterval(this.timer)
    this.timer = undefined
  }
}

function closeChokidar(w: ChokidarWatcher): void {
  releaseThrottleTimers(w)
  void w.close().catch(() => undefined)
}

/**
 * chokidar 5's `close()` forgets its throttle timers (up to 1 s, started by directory re-reads)
 * without clearing them, which keeps a process alive after every tail has ended. Clear them.
 * Guarded: if chokidar's internals change, this does nothing.
 */
function releaseThrottleTimers(w: ChokidarWatcher): void {
  const throttled = (w as unknown as { _throttled?: Map<string, Map<string, { clear?: () => void }>> })._throttled
  if (!(throttled instanceof Map)) return
  for (const byPath of throttled.values()) {
    if (!(byPath instanceof Map)) continue
    for (const t of [...byPath.values()]) if (typeof t?.clear === 'function') t.clear()
  }
}
