import type { TopicStore } from '../../backends/backend.js'
import { ClosedError, InvalidArgumentError, TopicNotFoundError } from '../../core/errors.js'
import type { CompactionHooks } from '../config/context.js'

/**
 * The compaction passes of the compacted streams a gateway writes (`Stream-Compaction`): every
 * `everyMs`, one pass (`TopicStore.compact`) over each stream appended to through this gateway since
 * its last pass, one stream at a time. A store compacts in the background too, but a file store
 * only what it sealed (a segment of 64 MiB by default): these passes bring a stream's newest data
 * in, so a new reader gets the latest state within about `everyMs` of the writes. A failed pass is
 * told to `failed` and tried again at the next period.
 */
export class CompactionSchedule implements CompactionHooks {
  private readonly dirty = new Set<string>()
  private timer: NodeJS.Timeout | undefined
  private running: Promise<void> | undefined
  private closed = false

  constructor(
    private readonly store: TopicStore,
    private readonly everyMs: number,
    private readonly failed: (topic: string, error: unknown) => void,
  ) {}

  /** `topic`, a compacted stream's, was appended to: compact it at the next period. */
  touched(topic: string): void {
    if (this.closed) return
    this.dirty.add(topic)
    if (this.timer) return
    this.timer = setTimeout(() => {
      this.timer = undefined
      // After the passes still running, if a slow one outlasted the period.
      const run: Promise<void> = (this.running ?? Promise.resolve())
        .then(() => this.passes())
        .finally(() => {
          if (this.running === run) this.running = undefined
        })
      this.running = run
    }, this.everyMs)
    this.timer.unref()
  }

  /** Stop: no pass starts from now on; resolves once the one running (if any) has ended. */
  async close(): Promise<void> {
    this.closed = true
    clearTimeout(this.timer)
    this.timer = undefined
    await this.running
  }

  private async passes(): Promise<void> {
    const topics = [...this.dirty]
    this.dirty.clear()
    for (const topic of topics) {
      if (this.closed) return
      try {
        await this.store.compact(topic)
      } catch (e) {
        // Deleted (or made again, not compacted) meanwhile, or the store or gateway closing: no pass is due.
        if (e instanceof TopicNotFoundError || e instanceof InvalidArgumentError || e instanceof ClosedError) continue
        if (this.closed) return
        this.failed(topic, e)
        this.touched(topic)
      }
    }
  }
}
