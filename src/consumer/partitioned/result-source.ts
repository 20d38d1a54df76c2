import type { BatchIterator, BatchSource } from '../../stream/batch-iterator.js'
import { GroupMessageImpl } from '../group-message.js'
import { current, type PartitionHandle } from './partition-message.js'

/** What a result stream reads its messages from: a processor. */
export interface MessageSource<M> {
  iterate(signal: AbortSignal): BatchIterator<M>
}

/**
 * A stream over a processor's messages that yields what their handling sends, once stored
 * (`windowed()`'s window results, `joinStreams()`'s joined pairs): it reads the processor's next
 * batch and hands each message still current (its partition not rewound since) to `take`; a
 * result `take` sends is `track`ed and yielded once stored, without the processing waiting for it.
 * It ends when the processor's iteration ends and every result sent has settled.
 */
export abstract class ResultSource<M, R> implements BatchSource<R> {
  private it: BatchIterator<M> | undefined
  /** The processor's next batch, being read. */
  private reading: Promise<M[] | undefined> | undefined
  /** The processor's iteration ended. */
  private ended = false
  /** Results stored, not yet yielded; results sent, not yet settled. */
  private readonly ready: R[] = []
  private pending = 0
  /** A failure that ends the stream (`fail`). */
  private failure: { error: unknown } | undefined
  /** Wakes a `next` waiting for a batch or a result. */
  private wake: (() => void) | undefined

  /** Process one message (current when handed over). */
  protected abstract take(m: M): void

  /** The processor to read; called on the first `next`, which awaits it. */
  protected abstract source(): MessageSource<M> | Promise<MessageSource<M>>

  /** Called once the processor's iteration ends (or the stream closes). */
  protected stopped(): void {}

  /** Called after each batch's messages were given to `take`. */
  protected batchDone(): void {}

  async next(signal: AbortSignal): Promise<R[] | undefined> {
    if (this.it === undefined) this.it = (await this.source()).iterate(signal)
    const it = this.it
    for (;;) {
      if (this.failure !== undefined) throw this.failure.error
      // Results stored since the last call go first; the processing does not wait for them.
      if (this.ready.length > 0) return this.ready.splice(0)
      if (this.ended && this.pending === 0) return undefined
      const batch = this.ended ? undefined : (this.reading ??= it.nextBatch())
      const woken = new Promise<void>((resolve) => (this.wake = resolve))
      const got = await (batch === undefined ? woken.then(() => null) : Promise.race([batch, woken.then(() => null)]))
      if (got === null) continue // a result was stored (or failed), or the stream failed
      this.reading = undefined
      if (got === undefined) {
        this.ended = true
        this.stopped()
        continue
      }
      for (const m of got) if (isCurrent(m)) this.take(m)
      this.batchDone()
    }
  }

  /** A result sent: yielded once stored (not if it failed: it is sent again, by its message coming again). */
  protected track(sent: Promise<R | undefined>): void {
    this.expect()
    void sent.then((r) => this.settled(r))
  }

  /** A result sent, told by a callback (`settled`) rather than a promise. */
  protected expect(): void {
    this.pending++
  }

  /** A result `expect`ed settled: `r` is yielded (undefined: it failed, and is sent again by its message coming again). */
  protected settled(r: R | undefined): void {
    this.pending--
    if (r !== undefined) this.ready.push(r)
    this.wake?.()
  }

  /** End the stream with `error` (its next `next` throws it). */
  protected fail(error: unknown): void {
    this.failure ??= { error }
    this.wake?.()
  }

  close(): Promise<void> | void {
    this.stopped()
    return this.it?.finish()
  }
}

/** Whether a processor's message is still current: its partition was not rewound, sought or lost since it was handed out. */
export const isCurrent = (m: unknown): boolean =>
  current(GroupMessageImpl.handle(m as GroupMessageImpl<unknown, PartitionHandle>))

/** A sent result that failed: nothing to yield (its message comes again). */
export const noResult = (): undefined => undefined
