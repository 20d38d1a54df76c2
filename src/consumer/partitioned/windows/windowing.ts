import type { Key } from '../../../core/types.js'
import type { OwnedWrites, StateStore } from '../state/state-store.js'
import type { WindowIndex } from './window-index.js'

/** What a window kind reads and writes of a partition's state: a message's run (`WindowRun`) or a timer turn's writes. */
export type WindowState = Pick<StateStore, 'get' | 'set' | 'delete'>

/** A `WindowState` that also takes the windows' own values as they are (`OwnedWrites`). */
export type WindowStore = WindowState & OwnedWrites

/**
 * The watermark's key in the state, written when windows close. Every window a message writes
 * carries the watermark after it too (`m`), so a message that only adds to windows writes one key,
 * not two; the watermark restored is the largest of them.
 */
export const WM_KEY = 'wm'

/**
 * The key of a partition's timer turns (decision 208): `{ o, s, w? }`, the input the last turn is
 * named after, the next sequence number after it, and, while a turn decided on watermark `w` has
 * windows left to close, `w`.
 */
export const TURN_KEY = 'tk'

/** What `TURN_KEY` holds. */
export interface TurnRecord {
  o: number
  s: number
  w?: number
}

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
  /** The message's state as its run sees it (`WindowRun`), which takes the windows' own values (`OwnedWrites`). */
  st: WindowStore
  index: WindowIndex
  key: Key
  t: number
  /** The watermark before the event (late or not is judged on it). */
  wm: number
  /** The watermark after the event: each window written carries it (restored from them). */
  mark: number
  /** A window's aggregate with the event, from the one before (undefined: a new window). */
  add: (a: A | undefined) => A
  /** Told of each window the event went into, after it (early results). @default not told */
  touched?: (w: TouchedWindow<A>) => void
}

/** A window an event went into, as it is after the event (a session's `end` is its last event time + 1 so far). */
export interface TouchedWindow<A> {
  start: number
  end: number
  value: A
  /** The events in it so far. */
  n: number
}

/** What `Windowing.close` gives when it closes nothing (shared: no array per message). */
export const NO_WINDOWS: ReadonlyArray<ClosedWindow<never>> = Object.freeze([])

/** How a kind of window keeps its windows in a partition's state (`FixedWindows`, `SessionWindows`). */
export interface Windowing<A> {
  /** Put an event into its windows (see `Placement`); false when it is late: it went into no window. */
  place(p: Placement<A>): boolean
  /**
   * Take the windows that watermark `wm` closed out of the state, at most `limit` state keys
   * written, in order (`NO_WINDOWS` when none: most calls, one per message, close none).
   */
  close(st: WindowState, index: WindowIndex, wm: number, limit: number): ReadonlyArray<ClosedWindow<A>>
  /** Index a state entry (the state restored or rewound); the watermark it carries, if it is a window. */
  reindex(index: WindowIndex, stateKey: string, value: unknown): number | undefined
}

/** A partition's windows as a `windowed()` stream runs them: rebuilt from its state when it was restored or rewound. */
export interface WindowLane<M> {
  /** The generation of the partition it was built for. */
  generation: number
  index: WindowIndex
  wm: number
  /** When its last message was processed or its last turn decided, or it was built (ms since the epoch, wall clock). */
  quietSince: number
  /** A timer turn runs (or is being decided): the partition's messages wait in `held`. */
  busy: boolean
  held: M[]
}
