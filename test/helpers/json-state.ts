// A state store held as JSON values, keyed by strings, as a changelog restores it: the property
// tests of what is kept in a processor's state (windows, joins) run their logic over it.
import type { Key } from '../../src/core/types.js'
import type { OwnedWrites, StateStore } from '../../src/consumer/partitioned/state/state-store.js'

/** A state of JSON values (as restored from a changelog), keyed by strings. */
export class JsonState implements StateStore, OwnedWrites {
  readonly map = new Map<string, string>()
  get<T>(key: Key): T | undefined {
    const v = this.map.get(String(key))
    return v === undefined ? undefined : (JSON.parse(v) as T)
  }
  has(key: Key): boolean {
    return this.map.has(String(key))
  }
  set(key: Key, value: unknown): void {
    this.map.set(String(key), JSON.stringify(value))
  }
  /** As `set`: a value is copied (as JSON) when it is written. */
  setOwned(key: Key, value: unknown): void {
    this.set(key, value)
  }
  delete(key: Key): void {
    this.map.delete(String(key))
  }
  get size(): number {
    return this.map.size
  }
  *entries<T>(): IterableIterator<[string, T]> {
    for (const [k, v] of this.map) yield [k, JSON.parse(v) as T]
  }
}
