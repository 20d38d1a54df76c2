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

/** One event to place: of `key` at event time `t`, into the windows of a partition's state and index. */
export interface Placement<A> {
  st: StateStore
  index: WindowIndex
  key: Key
  t: number
  /** The watermark before the event (late or not is judged on it). */
  wm: number
  /** The watermark after the event: each window written carries it (restored from them). */
  mark: number
  /** A window's aggregate with the event, from the one before (undefined: a new window). */
  add: (a: A | undefined) => A
}

/** How a kind of window keeps its windows in a partition's state (`FixedWindows`, `SessionWindows`). */
export interface Windowing<A> {
  /** Put an event into its windows (see `Placement`); false when it is late: it went into no window. */
  place(p: Placement<A>): boolean
  /** Take the windows that watermark `wm` closed out of the state, at most `limit` state keys written, in order. */
  close(st: StateStore, index: WindowIndex, wm: number, limit: number): Array<ClosedWindow<A>>
  /** Index a state entry (the state restored or rewound); the watermark it carries, if it is a window. */
  reindex(index: WindowIndex, stateKey: string, value: unknown): number | undefined
}
