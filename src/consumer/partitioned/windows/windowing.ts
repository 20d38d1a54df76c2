import type { Key } from '../../../core/types.js'
import type { StateStore } from '../state/state-store.js'
import type { WindowIndex } from './window-index.js'

/** A window the watermark closed, taken out of the state. */
export interface ClosedWindow<A> {
  /** `[start, end)` in event time. */
  start: number
  end: number
  key: Key
  value: A
}

/** How a kind of window keeps its windows in a partition's state (`FixedWindows`, `SessionWindows`). */
export interface Windowing<A> {
  /**
   * Put an event of `key` at event time `t` into its windows, the watermark being `wm`; `add`
   * makes a window's aggregate with the event from the one before (undefined: a new window).
   * False when the event is late: it went into no window.
   */
  place(st: StateStore, index: WindowIndex, key: Key, t: number, wm: number, add: (a: A | undefined) => A): boolean
  /** Take the windows that watermark `wm` closed out of the state, at most `limit` state keys written, in order. */
  close(st: StateStore, index: WindowIndex, wm: number, limit: number): Array<ClosedWindow<A>>
  /** Index a state entry (the state restored or rewound). */
  reindex(index: WindowIndex, stateKey: string, value: unknown): void
}
