// From rxjs's own modules, not its index: 'rxjs' loads every operator (about 55 ms of a 145 ms
// import of twainmq); these two are the same module instances the index re-exports (rxjs 7 exports
// ./internal/* for every condition), so an Observable made here is the application's Observable.
// The type comes from 'rxjs' (so the published declarations name only the package's root, which
// every moduleResolution finds); it is the very class imported here.
import type { Observable as RxObservable } from 'rxjs'
import { Observable } from 'rxjs/internal/Observable'
import { observable as observableKey } from 'rxjs/internal/symbol/observable'
import { AsyncIterableX } from 'ix/asynciterable/asynciterablex'
import { BatchIterator, type BatchSource } from './batch-iterator.js'

/**
 * At run time a `MessageStream` is an IxJS `AsyncIterableX`: IxJS's `from()` and `forEach(…,
 * signal)` hand their abort signal to `[Symbol.asyncIterator](signal)` only for sources of that
 * class (any other source is read with no way to abort a waiting `next()`). It is typed as a plain
 * base so that twainmq's main entry does not depend on IxJS's type declarations.
 */
const IxIterable = AsyncIterableX as unknown as abstract new () => object

/**
 * Where a stream's iterations come from: a tail's or history's reader, a consumer's member core.
 * `attach` hands the source the control of the stream's iterations, so a consumer ends them
 * (quietly, or with its failure) without the stream carrying hooks for subclasses to override.
 */
export interface StreamSource<T> {
  /** The source of one iteration. */
  open(): BatchSource<T>
  /** The source of an iteration begun after `close()`; none (the default) ends it at once. */
  afterClose?(): BatchSource<T> | undefined
  /** Called once, by the stream's constructor. */
  attach?(control: StreamControl): void
}

/** What a stream's source may do to the stream's iterations. */
export interface StreamControl {
  /** End every live iteration with `error`. */
  fail(error: unknown): void
  /** End every iteration quietly (the stream's `close()`); later ones get the source's `afterClose`. */
  end(): Promise<void>
}

/**
 * An `AsyncIterable<T>` that is also an RxJS interop Observable: `for await (const m of stream)`,
 * `from(stream)` (which uses our bridge, not rxjs's generic async-iterable one) or
 * `stream.asObservable()`.
 *
 * Each iteration or subscription is independent (a cold stream). Breaking out of `for await`,
 * `return()`, unsubscribing or `close()` ends it quietly and releases its watchers, timers and
 * blocked reads at once; aborting the `signal` ends it with `AbortError`, and so does aborting a
 * signal given to one iteration, e.g. by IxJS: `from(stream).forEach(fn, undefined, signal)`.
 *
 * @example
 * ```ts
 * for await (const m of twain.tail('orders', { from: 'start' })) console.log(m.offset, m.value)
 * from(twain.tail('orders')).pipe(take(10)).subscribe(console.log)
 * ```
 */
export class MessageStream<T> extends IxIterable implements AsyncIterable<T> {
  readonly #source: StreamSource<T>
  readonly #signal: AbortSignal | undefined
  /** Every live iteration is also kept here (the owning `Twain` ends them all on close). */
  readonly #registry: Set<BatchIterator<unknown>> | undefined
  readonly #active = new Set<BatchIterator<unknown>>()
  #closed = false

  /** @internal Streams are made by `Twain` (tail, history) and consumers. */
  constructor(source: StreamSource<T>, signal?: AbortSignal, registry?: Set<BatchIterator<unknown>>) {
    super()
    this.#source = source
    this.#signal = signal
    this.#registry = registry
    source.attach?.({ fail: (e) => this.#fail(e), end: () => this.#end() })
  }

  /**
   * @internal One iteration over the batches (used by the Observable bridge and operators).
   * @param signal ends this iteration only (with `AbortError`), as the stream's own `signal` does.
   */
  iterate(signal?: AbortSignal): BatchIterator<T> {
    const closed = this.#closed
    const after = closed ? this.#source.afterClose?.() : undefined
    const it = new BatchIterator<T>(
      after ?? (closed ? { next: async () => undefined, close: () => undefined } : this.#source.open()),
      [this.#signal, signal],
      (done) => {
        this.#active.delete(done)
        this.#registry?.delete(done)
      },
    )
    if (closed) {
      if (after === undefined) void it.finish()
    } else {
      this.#active.add(it as BatchIterator<unknown>)
      this.#registry?.add(it as BatchIterator<unknown>)
    }
    return it
  }

  /**
   * One iteration. `signal` (IxJS passes its own here, e.g. from `forEach(fn, thisArg, signal)`)
   * ends this iteration with `AbortError`, like the stream's `signal` option, without ending others.
   */
  [Symbol.asyncIterator](signal?: AbortSignal): AsyncIterator<T> {
    return this.iterate(signal)
  }

  /**
   * The stream as an RxJS Observable; unsubscribing releases everything at once. It pushes each
   * batch as soon as it is read: an Observable has no backpressure, so a slow subscriber (e.g.
   * `concatMap`) queues what a tail or history reads, a whole backlog included. `pullMap`
   * (`twainmq/rx`) reads the stream at its handlers' pace instead.
   */
  asObservable(): RxObservable<T> {
    return new Observable<T>((subscriber) => {
      const it = this.iterate()
      let live = true
      const pump = async () => {
        try {
          for (;;) {
            const batch = await it.nextBatch()
            if (!live) return batch && it.giveBack(batch)
            if (!batch) return subscriber.complete()
            for (let i = 0; i < batch.length; i++) {
              subscriber.next(batch[i] as T)
              if (!live || subscriber.closed) return it.giveBack(batch.slice(i + 1))
            }
          }
        } catch (e) {
          if (live) subscriber.error(e)
        }
      }
      void pump()
      return () => {
        live = false
        void it.finish()
      }
    })
  }

  /** End every live iteration with `error` (a consumer's fatal failure). */
  #fail(error: unknown): void {
    for (const it of [...this.#active]) it.abortWith(error)
  }

  /** End every iteration quietly; later ones end at once (or get the source's `afterClose`). */
  async #end(): Promise<void> {
    this.#closed = true
    await Promise.all([...this.#active].map((it) => it.finish()))
  }

  /** End every iteration and subscription of this stream quietly; later iterations end at once. */
  close(): Promise<void> {
    return this.#end()
  }

  /** Whether `close()` was called. */
  get closed(): boolean {
    return this.#closed
  }
}

// IxJS gives AsyncIterableX a static Symbol.hasInstance that answers true for any of its
// iterables (by their toStringTag), and subclasses inherit statics: `consumer instanceof
// SharedConsumer` was true for a partitioned consumer. MessageStream and its subclasses use the
// ordinary prototype check; IxJS's own `x instanceof AsyncIterableX` is unchanged.
Object.defineProperty(MessageStream, Symbol.hasInstance, {
  value: function (this: abstract new (...args: never[]) => unknown, x: unknown): boolean {
    return Function.prototype[Symbol.hasInstance].call(this, x)
  },
  writable: true,
  configurable: true,
})

// The RxJS interop key is `Symbol.observable` where defined, else '@@observable'; rxjs exports it.
Object.defineProperty(MessageStream.prototype, observableKey, {
  value: function (this: MessageStream<unknown>) {
    return this.asObservable()
  },
  writable: true,
  configurable: true,
})
