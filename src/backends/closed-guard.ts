import { ClosedError } from '../core/errors.js'

/** The error every call on a closed backend fails with (not retriable: the instance stays closed). */
export function closedError(kind: 'file' | 'redis', what: string): ClosedError {
  return new ClosedError(`The ${kind} backend is closed: cannot ${what} (open the store again)`)
}

/**
 * `target` whose methods fail with `ClosedError` once `isClosed()` is true: the promise-returning
 * ones reject, the synchronous ones named in `sync` throw. Used for a backend's group store, whose
 * methods all go to the disk or the server.
 */
export function closedGuard<T extends object>(
  target: T,
  isClosed: () => boolean,
  kind: 'file' | 'redis',
  sync: ReadonlyArray<keyof T> = [],
): T {
  return new Proxy(target, {
    get(t, prop, receiver) {
      const value: unknown = Reflect.get(t, prop, receiver)
      if (typeof value !== 'function') return value
      return (...args: unknown[]): unknown => {
        if (!isClosed()) return (value as (...a: unknown[]) => unknown).apply(t, args)
        const e = closedError(kind, String(prop))
        if (sync.includes(prop as keyof T)) throw e
        return Promise.reject(e)
      }
    },
  })
}
