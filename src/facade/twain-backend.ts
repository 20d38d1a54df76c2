import type { Backend } from '../backends/backend.js'

/** The store under each `Twain` (set by its constructor); keyed weakly so a closed Twain is collected. */
const stores = new WeakMap<object, Backend>()

/** @internal Record the store of a `Twain` (its constructor calls this). */
export function bindBackend(twain: object, store: Backend): void {
  stores.set(twain, store)
}

/**
 * @internal The store under a `Twain`, for package-internal layers above the facade (the HTTP
 * gateway appends and watches through it). Not part of the public API.
 * @throws TypeError when `twain` is not a `Twain`.
 */
export function backendOf(twain: object): Backend {
  const store = stores.get(twain)
  if (!store) throw new TypeError('Expected a Twain instance (from open())')
  return store
}
