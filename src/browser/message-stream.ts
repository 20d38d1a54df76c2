import { AbortError } from '../core/errors.js'
import type { BrowserMessage } from './message.js'
import {
  interopObservable,
  markObservable,
  type InteropObservable,
  type InteropObserver,
  type InteropSubscription,
} from './observable.js'
import { StreamReader, type BatchReader, type ReadPlan } from './reader.js'

/**
 * A browser tail or history read: an `AsyncIterable` **and** an interop Observable, like the Node
 * `MessageStream`. `for await (const m of s)`, RxJS `from(s)` (which uses the interop method, so
 * unsubscribing aborts the HTTP request at once) or `s.asObservable()`.
 *
 * Each iteration or subscription is its own read (a cold stream). Breaking out of `for await`,
 * unsubscribing or `close()` ends it quietly; aborting the `signal` ends it with `AbortError`. A
 * refused read (401, 403, 404, …) ends it with an `HttpError` carrying the status.
 */
export class BrowserMessageStream<V = unknown> implements AsyncIterable<BrowserMessage<V>> {
  private readonly readers = new Set<BatchReader<V>>()
  private isClosed = false

  /** @internal Made by `TwainBrowserClient.tail` / `history`. */
  constructor(
    private readonly plan: ReadPlan,
    private readonly signal: AbortSignal | undefined,
  ) {}

  /** One read: an async iterator over the messages. */
  [Symbol.asyncIterator](): AsyncIterator<BrowserMessage<V>> {
    const batches = this.open()
    let pending: BrowserMessage<V>[] = []
    return {
      next: async () => {
        while (pending.length === 0) {
          const batch = await batches.next()
          if (!batch) return { done: true, value: undefined }
          pending = batch
        }
        return { done: false, value: pending.shift()! }
      },
      return: async () => {
        batches.close()
        return { done: true, value: undefined }
      },
    }
  }

  /** The stream as an interop Observable (RxJS: `from(stream)` or `from(stream.asObservable())`). */
  asObservable(): InteropObservable<BrowserMessage<V>> {
    return interopObservable<BrowserMessage<V>>((sink, isClosed) => {
      const batches = this.open()
      void (async () => {
        try {
          for (;;) {
            const batch = await batches.next()
            if (!batch) return sink.complete()
            for (const m of batch) {
              if (isClosed()) return
              sink.next(m)
            }
          }
        } catch (e) {
          sink.error(e)
        }
      })()
      return () => batches.close()
    })
  }

  /** Subscribes directly (the Observable half of the interop protocol). */
  subscribe(observer?: InteropObserver<BrowserMessage<V>> | ((m: BrowserMessage<V>) => void)): InteropSubscription {
    return this.asObservable().subscribe(observer)
  }

  /** Ends every read of this stream quietly; later reads end at once. */
  close(): void {
    this.isClosed = true
    for (const r of [...this.readers]) r.close()
  }

  /** Whether `close()` was called. */
  get closed(): boolean {
    return this.isClosed
  }

  private open(): { next(): Promise<BrowserMessage<V>[] | undefined>; close(): void } {
    if (this.isClosed) return { next: async () => undefined, close: () => undefined }
    if (this.signal?.aborted) return failed(abortError(this.signal))
    const plan = this.plan
    const cache = plan.cache
    const reader: BatchReader<V> =
      cache === undefined
        ? readerOf<V>(plan)
        : new DeferredReader<V>(() =>
            import('./cached-tail.js').then(
              (m) =>
                new m.CachedTailReader<V>(plan.stream, cache.key, plan.from, cache.maxMessages, (from) =>
                  readerOf<V>({ ...plan, from }),
                ),
            ),
          )
    this.readers.add(reader)
    const signal = this.signal
    let aborted: Error | undefined
    const onAbort = (): void => {
      aborted = abortError(signal!)
      reader.close()
    }
    signal?.addEventListener('abort', onAbort, { once: true })
    const close = (): void => {
      signal?.removeEventListener('abort', onAbort)
      this.readers.delete(reader)
      reader.close()
    }
    return {
      next: async () => {
        let batch: BrowserMessage<V>[] | undefined
        try {
          batch = await reader.next()
        } catch (e) {
          close()
          throw e
        }
        if (aborted) throw aborted
        if (!batch) close()
        return batch
      },
      close,
    }
  }
}

markObservable(BrowserMessageStream.prototype, function (this: unknown) {
  return (this as BrowserMessageStream).asObservable()
})

/** The network read of `plan`: its own request, or a share of the page's origin (loaded on demand). */
function readerOf<V>(plan: ReadPlan): BatchReader<V> {
  return plan.shareKey === undefined
    ? new StreamReader<V>(plan)
    : new DeferredReader<V>(() =>
        import('./shared-tail.js').then((m) => m.openSharedTail<V>(plan) ?? new StreamReader<V>(plan)),
      )
}

/** A reader made asynchronously (the sharing code is loaded on demand); closed before it exists, it is closed once it does. */
class DeferredReader<V> implements BatchReader<V> {
  private readonly reader: Promise<BatchReader<V>>
  private closed = false

  constructor(make: () => Promise<BatchReader<V>>) {
    this.reader = make().then((r) => {
      if (this.closed) r.close()
      return r
    })
  }

  async next(): Promise<BrowserMessage<V>[] | undefined> {
    const r = await this.reader
    return this.closed ? undefined : r.next()
  }

  close(): void {
    this.closed = true
    this.reader.then(
      (r) => r.close(),
      () => undefined,
    )
  }
}

function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason
  return reason instanceof AbortError ? reason : new AbortError('The operation was aborted', { cause: reason })
}

function failed(error: Error): { next(): Promise<never>; close(): void } {
  return { next: () => Promise.reject(error), close: () => undefined }
}
