import { watch as fsWatch, type FSWatcher as NodeWatcher } from 'node:fs'
import { watch as chokidarWatch, type FSWatcher as ChokidarWatcher } from 'chokidar'
import { SEGMENT_EXT } from './layout.js'

interface Entry {
  /** Listener → whether it keeps the process alive. */
  listeners: Map<() => void, boolean>
  raw: NodeWatcher | undefined
  /** Started while at least one listener is persistent (chokidar cannot be unref'd). */
  chokidar: ChokidarWatcher | undefined
  suffix: string
}

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
 * - chokidar on the directory: new and removed segments. Its `change` events are throttled to one
 *   per 50 ms per path and drop the rest, so it cannot be the latency path on its own;
 * - a poll tick (`pollMs`) in case an event is lost (network file systems, overflowed queues).
 * Appends by this process wake tails directly through {@link WatchHub.notify}.
 */
export class WatchHub {
  private readonly entries = new Map<string, Entry>()
  private timer: NodeJS.Timeout | undefined
  private readonly pollMs: number

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
    e.listeners.set(listener, persistent)
    this.reconcile(dir, e)
    let done = false
    return () => {
      if (done) return
      done = true
      const cur = this.entries.get(dir)
      if (!cur) return
      cur.listeners.delete(listener)
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

  /** Keep handles referenced only while some listener is persistent. */
  private reconcile(dir: string, e: Entry): void {
    const persistent = [...e.listeners.values()].some(Boolean)
    if (persistent) {
      e.raw?.ref()
      e.chokidar ??= this.startChokidar(dir, e.suffix)
    } else {
      e.raw?.unref()
      if (e.chokidar) {
        closeChokidar(e.chokidar)
        e.chokidar = undefined
      }
    }
    this.reconcileTimer()
  }

  private reconcileTimer(): void {
    this.timer ??= setInterval(() => this.tick(), this.pollMs)
    const persistent = [...this.entries.values()].some((e) => [...e.listeners.values()].some(Boolean))
    if (persistent) this.timer.ref()
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
    for (const e of this.entries.values()) for (const l of e.listeners.keys()) l()
  }

  private start(dir: string, suffix: string): Entry {
    let raw: NodeWatcher | undefined
    try {
      raw = fsWatch(dir, { persistent: true }, (_event, name) => {
        if (name === null || String(name).endsWith(suffix)) this.fire(dir)
      })
      raw.on('error', () => {
        /* the poll tick keeps tails going */
      })
    } catch {
      raw = undefined // directory gone or inotify limit: chokidar and the poll tick remain
    }
    return { listeners: new Map(), raw, chokidar: undefined, suffix }
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

  private stop(e: Entry): void {
    e.raw?.close()
    if (e.chokidar) closeChokidar(e.chokidar)
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
