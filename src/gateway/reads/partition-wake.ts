import type { TopicStore } from '../../backends/backend.js'

/**
 * A watch on one partition (appends from any process wake it; the backend's file watch or blocking
 * read, never polling here). `wait` resolves at the next wake-up, after `ms`, or on abort; a
 * wake-up that came before `wait` is not lost. `close` releases the watch.
 */
export class PartitionWake {
  private dirty = false
  private resolve: (() => void) | undefined
  private readonly unwatch: () => void

  constructor(store: TopicStore, topic: string, partition: number) {
    this.unwatch = store.watch(topic, partition, () => {
      this.dirty = true
      this.resolve?.()
    })
  }

  /** Resolves true on a wake-up, false on timeout or abort. */
  wait(ms: number, signal: AbortSignal): Promise<boolean> {
    if (this.dirty) {
      this.dirty = false
      return Promise.resolve(true)
    }
    if (signal.aborted) return Promise.resolve(false)
    return new Promise<boolean>((done) => {
      const finish = (woke: boolean) => {
        clearTimeout(timer)
        signal.removeEventListener('abort', onAbort)
        this.resolve = undefined
        if (woke) this.dirty = false
        done(woke)
      }
      const onAbort = () => finish(false)
      const timer = setTimeout(() => finish(false), ms)
      signal.addEventListener('abort', onAbort, { once: true })
      this.resolve = () => finish(true)
    })
  }

  close(): void {
    this.unwatch()
    this.resolve?.()
  }
}
