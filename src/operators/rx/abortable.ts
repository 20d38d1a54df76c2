import { Observable, type MonoTypeOperatorFunction } from 'rxjs'
import { abortErrorFrom } from '../../core/errors.js'

/**
 * Errors the stream with `AbortError` when `signal` aborts (at once if it already has), which
 * unsubscribes everything upstream (handlers' results are then ignored, timers cleared).
 */
export function abortable<T>(signal: AbortSignal | undefined): MonoTypeOperatorFunction<T> {
  if (!signal) return (source) => source
  return (source) =>
    new Observable<T>((subscriber) => {
      if (signal.aborted) {
        subscriber.error(abortErrorFrom(signal))
        return undefined
      }
      const onAbort = (): void => subscriber.error(abortErrorFrom(signal))
      signal.addEventListener('abort', onAbort, { once: true })
      const upstream = source.subscribe(subscriber)
      return () => {
        signal.removeEventListener('abort', onAbort)
        upstream.unsubscribe()
      }
    })
}
