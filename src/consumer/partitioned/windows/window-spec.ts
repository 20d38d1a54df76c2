import { InvalidArgumentError } from '../../../core/errors.js'

/** How event time is cut into windows (`tumbling`, `hopping`): the windows `[start, end)` an event time falls in. */
export interface WindowSpec {
  readonly kind: 'tumbling' | 'hopping'
  /** Length of a window, ms. */
  readonly sizeMs: number
  /** Distance between two windows' starts, ms (`sizeMs` for tumbling windows). */
  readonly advanceMs: number
}

function checkMs(what: string, v: unknown): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v <= 0)
    throw new InvalidArgumentError(`${what} must be a positive integer of ms, got ${String(v)}`)
  return v
}

/** Windows of `sizeMs` one after the other, aligned on the epoch: each event time is in one. */
export function tumbling(sizeMs: number): WindowSpec {
  const size = checkMs('tumbling() size', sizeMs)
  return { kind: 'tumbling', sizeMs: size, advanceMs: size }
}

/** Windows of `sizeMs` starting every `advanceMs` (≤ `sizeMs`), aligned on the epoch: an event time is in `sizeMs / advanceMs` of them. */
export function hopping(sizeMs: number, advanceMs: number): WindowSpec {
  const size = checkMs('hopping() size', sizeMs)
  const advance = checkMs('hopping() advance', advanceMs)
  if (advance > size)
    throw new InvalidArgumentError(`hopping() advance ${advance} ms is larger than its size ${size} ms`)
  return { kind: 'hopping', sizeMs: size, advanceMs: advance }
}

/** The starts of the windows of `spec` that contain event time `t`, earliest first. */
export function windowStarts(spec: WindowSpec, t: number): number[] {
  const last = Math.floor(t / spec.advanceMs) * spec.advanceMs
  const out: number[] = []
  for (let s = last - Math.ceil(spec.sizeMs / spec.advanceMs - 1) * spec.advanceMs; s <= last; s += spec.advanceMs)
    if (t < s + spec.sizeMs) out.push(s)
  return out
}
