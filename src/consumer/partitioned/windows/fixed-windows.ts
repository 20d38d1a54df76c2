import type { Key } from '../../../core/types.js'
import { decodeStateKey, encodeStateKey } from '../state/state-key.js'
import { deferredBytes } from '../state/state-store.js'
import { NO_WINDOWS, type ClosedWindow, type Placement, type WindowState, type Windowing } from './windowing.js'
import type { WindowIndex } from './window-index.js'
import { firstStart, type FixedWindowSpec } from './window-spec.js'

/** A window's key in the state: `w:<start>:<encoded key>` → `{ a: aggregate, m: the watermark when last written, n: its events }`. */
const windowKey = (start: number, key: Key): string => `w:${start}:${encodeStateKey(key)}`

/**
 * `deferredBytes(w, true)` of a window's value `w` = `{ a, m, n }` (`m`, `n` finite numbers) less
 * that of its aggregate `a`: known without walking the object per event.
 */
const WINDOW_FIELDS_BYTES = deferredBytes({ a: 0, m: 0, n: 0 }, true) - deferredBytes(0, false)

/** The bound `deferredBytes(w, true)` of a window's value, from its aggregate's (-1: its encoding cannot wait). */
export function windowBytes(a: unknown): number {
  const b = deferredBytes(a, false)
  return b < 0 ? -1 : WINDOW_FIELDS_BYTES + b
}

/** Most event keys `WindowKeys` remembers a window key of (then it starts afresh). */
const KEYS_KEPT = 8192

/**
 * The state key of each event key's latest window, built once, not per event: a key string built
 * anew is read and hashed anew by every map it is looked up in.
 */
class WindowKeys {
  private readonly byKey = new Map<Key, { start: number; k: string }>()

  of(start: number, key: Key): string {
    const had = this.byKey.get(key)
    if (had !== undefined) {
      if (had.start !== start) {
        had.start = start
        had.k = windowKey(start, key)
      }
      return had.k
    }
    if (this.byKey.size >= KEYS_KEPT) this.byKey.clear()
    const k = windowKey(start, key)
    this.byKey.set(key, { start, k })
    return k
  }
}

/** Tumbling and hopping windows: an event goes into each open window of its key that holds its time. */
export class FixedWindows<A> implements Windowing<A> {
  private readonly keys = new WindowKeys()

  constructor(private readonly spec: FixedWindowSpec) {}

  place({ st, index, key, t, wm, mark, add, touched }: Placement<A>): boolean {
    let placed = false
    const { sizeMs, advanceMs } = this.spec
    // The starts `windowStarts` gives, without an array per event.
    for (let start = firstStart(this.spec, t); start <= t; start += advanceMs) {
      const end = start + sizeMs
      if (t >= end || end <= wm) continue // not its window, or closed already
      placed = true
      const k = this.keys.of(start, key)
      const had = st.get<{ a: A; n?: number }>(k)
      const w = { a: add(had?.a), m: mark, n: (had?.n ?? 0) + 1 }
      st.setOwned(k, w, windowBytes(w.a)) // a new object, never changed: its encoding may wait
      if (had === undefined) index.add(end, k)
      touched?.({ start, end, value: w.a, n: w.n })
    }
    return placed
  }

  close(st: WindowState, index: WindowIndex, wm: number, limit: number): ReadonlyArray<ClosedWindow<A>> {
    const taken = index.takeUpTo(wm, limit)
    if (taken.length === 0) return NO_WINDOWS
    const out: Array<ClosedWindow<A>> = []
    for (const { end, key } of taken) {
      const w = st.get<{ a: A }>(key)
      st.delete(key)
      if (w === undefined) continue
      const rest = key.slice(2)
      const sep = rest.indexOf(':')
      out.push({ start: Number(rest.slice(0, sep)), end, key: decodeStateKey(rest.slice(sep + 1)), value: w.a })
    }
    return out
  }

  reindex(index: WindowIndex, stateKey: string, value: unknown): number | undefined {
    if (!stateKey.startsWith('w:')) return undefined
    index.add(Number(stateKey.slice(2, stateKey.indexOf(':', 2))) + this.spec.sizeMs, stateKey)
    return (value as { m?: number }).m
  }
}
