/** A map per store object (weakly held): caches and locks of one store never mix with another's. */
export function perStore<V>(): (store: object) => Map<string, V> {
  const maps = new WeakMap<object, Map<string, V>>()
  return (store) => {
    let m = maps.get(store)
    if (!m) maps.set(store, (m = new Map()))
    return m
  }
}
