import { InvalidArgumentError } from '../../../core/errors.js'

/** Windows of a fixed length (`tumbling`, `hopping`): the windows `[start, end)` an event time falls in. */
export interface FixedWindowSpec {
  readonly kind: 'tumbling' | 'hopping'
  /** Length of a window, ms. */
  readonly sizeMs: number
  /** Distance between two windows' starts, ms (`sizeMs` for tumbling windows). */
  readonly advanceMs: number
}

/** Session windows (`session`): a key's events less than `gapMs` apart are in one window. */
export interface SessionWindowSpec {
  readonly kind: 'session'
  /** The silence, ms of event time, that ends a session. */
  readonly gapMs: number
}

/** How event time is cut into windows: `tumbling(ms)`, `hopping(ms, advanceMs)` or `session(gapMs)`. */
export type WindowSpec = FixedWindowSpec | SessionWindowSpec

/** Most windows one event time may fall in (each is a state key the message writes). */
export const MAX_WINDOWS_PER_EVENT = 500

function checkMs(what: string, v: unknown): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v <= 0)
    throw new InvalidArgumentError(`${what} must be a positive integer of ms, got ${String(v)}`)
  return v
}

/** Windows of `sizeMs` one after the other, aligned on the epoch: each event time is in one. */
export function tumbling(sizeMs: number): FixedWindowSpec {
  const size = checkMs('tumbling() size', sizeMs)
  return { kind: 'tumbling', sizeMs: size, advanceMs: size }
}

/**
 * Windows of `sizeMs` starting every `advanceMs` (≤ `sizeMs`), aligned on the epoch: an event time
 * is in `sizeMs / advanceMs` of them (at most 500).
 */
export function hopping(sizeMs: number, advanceMs: number): FixedWindowSpec {
  const size = checkMs('hopping() size', sizeMs)
  const advance = checkMs('hopping() advance', advanceMs)
  if (advance > size)
    throw new InvalidArgumentError(`hopping() advance ${advance} ms is larger than its size ${size} ms`)
  if (Math.ceil(size / advance) > MAX_WINDOWS_PER_EVENT)
    throw new InvalidArgumentError(
      `hopping(${size}, ${advance}) puts an event in ${Math.ceil(size / advance)} windows, more than ${MAX_WINDOWS_PER_EVENT}`,
    )
  return { kind: 'hopping', sizeMs: size, advanceMs: advance }
}

/**
 * Session windows: a key's events whose event times are less than `gapMs` apart are in one window,
 * `[first event time, last event time + 1)`; it closes once the watermark is `gapMs` past its last
 * event. Needs `merge` in `windowed()`'s options (an event may join two sessions into one).
 */
export function session(gapMs: number): SessionWindowSpec {
  return { kind: 'session', gapMs: checkMs('session() gap', gapMs) }
}

/**
 * The earliest start of a window of `spec` that may contain event time `t`: the windows that do
 * are those from it every `advanceMs` up to `t` with `t < start + sizeMs` (`windowStarts`).
 */
export const firstStart = (spec: FixedWindowSpec, t: number): number =>
  Math.floor(t / spec.advanceMs) * spec.advanceMs - Math.ceil(spec.sizeMs / spec.advanceMs - 1) * spec.advanceMs

/** The starts of the windows of `spec` that contain event time `t`, earliest first. */
export function windowStarts(spec: FixedWindowSpec, t: number): number[] {
  const out: number[] = []
  for (let s = firstStart(spec, t); s <= t; s += spec.advanceMs) if (t < s + spec.sizeMs) out.push(s)
  return out
}
