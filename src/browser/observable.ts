// A minimal interop Observable (the TC39 / RxJS `Symbol.observable` protocol) so that RxJS's
// `from(stream)` works without this entry importing RxJS.

/** An observer as RxJS and the interop protocol pass it. */
export interface InteropObserver<T> {
  next?: (value: T) => void
  error?: (error: unknown) => void
  complete?: () => void
}

/** What `subscribe` returns. */
export interface InteropSubscription {
  unsubscribe(): void
  readonly closed: boolean
}

/** An Observable in the interop sense: `subscribe` plus the `Symbol.observable` method returning itself. */
export interface InteropObservable<T> {
  subscribe(observer?: InteropObserver<T> | ((value: T) => void)): InteropSubscription
}

/** The keys RxJS looks under: `Symbol.observable` where the platform defines it, and '@@observable'. */
export function observableKeys(): (string | symbol)[] {
  const sym = (Symbol as unknown as { observable?: symbol }).observable
  return typeof sym === 'symbol' ? [sym, '@@observable'] : ['@@observable']
}

/** Marks `target` as an interop Observable whose `Symbol.observable` method returns `self()`. */
export function markObservable(target: object, self: (this: unknown) => unknown): void {
  for (const key of observableKeys())
    Object.defineProperty(target, key, { value: self, writable: true, configurable: true })
}

/**
 * An interop Observable whose producer is `start(observer)`; `start` returns the teardown, run at
 * once on unsubscribe. After error or complete nothing more is delivered.
 */
export function interopObservable<T>(
  start: (sink: Required<InteropObserver<T>>, isClosed: () => boolean) => () => void,
): InteropObservable<T> {
  const observable: InteropObservable<T> = {
    subscribe(observer) {
      const o: InteropObserver<T> = typeof observer === 'function' ? { next: observer } : (observer ?? {})
      let closed = false
      let teardown: (() => void) | undefined
      const stop = (): void => {
        if (closed) return
        closed = true
        teardown?.()
      }
      const sink: Required<InteropObserver<T>> = {
        next: (v) => void (closed || o.next?.(v)),
        error: (e) => {
          if (closed) return
          stop()
          if (o.error) o.error(e)
          else reportLater(e)
        },
        complete: () => {
          if (closed) return
          stop()
          o.complete?.()
        },
      }
      teardown = start(sink, () => closed)
      if (closed) teardown()
      return {
        unsubscribe: stop,
        get closed() {
          return closed
        },
      }
    },
  }
  markObservable(observable, function (this: unknown) {
    return this
  })
  return observable
}

/** An error nobody observes is thrown asynchronously, as RxJS does, so it is not silently lost. */
function reportLater(error: unknown): void {
  setTimeout(() => {
    throw error
  })
}
