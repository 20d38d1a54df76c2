import { InvalidArgumentError } from '../../../core/errors.js'
import type { Key } from '../../../core/types.js'
import type { ProcessorMessage } from '../processor-message.js'
import type { WindowSpec } from './window-spec.js'

/** Options of `windowed()` (README "Windows"). */
export interface WindowOptions<V, K extends Key, A> {
  /** How event time is cut into windows: `tumbling(ms)`, `hopping(ms, advanceMs)` or `session(gapMs)`. @default required */
  window: WindowSpec
  /** The topic each window's result is sent to, under the input's key, as `{ start, end, value }`. @default required */
  to: string
  /** A new window's aggregate. @default required */
  initial: () => A
  /** The aggregate with one more message (a pure function of its arguments: it runs again for a message processed again). @default required */
  add: (aggregate: A, m: ProcessorMessage<V, K>) => A
  /** Two sessions' aggregates as one (an event joined them), the earlier first; a pure function. @default required with `session()`, unused otherwise */
  merge?: (earlier: A, later: A) => A
  /** A message's event time, ms since the epoch. @default the message's `timestamp` */
  eventTime?: (m: ProcessorMessage<V, K>) => number
  /** How far event time may go back: the watermark is the largest event time seen less this. @default 0 */
  latenessMs?: number
  /** Topic a late message (all its windows closed) is sent to, as it is. @default none: it is dropped */
  lateTo?: string
  /** Called with each late message (before it is acked). @default none */
  onLate?: (m: ProcessorMessage<V, K>) => void
  /**
   * Close windows on idle partitions: once a partition is caught up, every message of it is
   * processed, and nothing came for `idleMs`, its watermark moves on with the wall clock (by the
   * time since its last message) and the windows it passes close, exactly once (decision 208).
   * Results then depend on when messages arrived, not on them alone (a replay can differ).
   * @default undefined: a watermark moves only with messages
   */
  idleMs?: number
  /**
   * Early (speculative) results: a window's aggregate so far is also sent to `to`, marked
   * `early: true`, after every `earlyEvery`-th message it gets while open (a session's `end` is
   * then its last event so far + 1). Each is an output of that message, stored once like a final
   * result; the final result comes as before.
   * @default undefined: final results only
   */
  earlyEvery?: number
}

/** One window's result, as sent to `to`. */
export interface WindowResult<A, K extends Key = Key> {
  key: K
  /** The window, `[start, end)` in event time (ms since the epoch). */
  start: number
  end: number
  value: A
  /** The input partition it was computed in. */
  partition: number
  /** Where it is stored. */
  offset: number
  /** An earlier delivery of the message that closed it stored it (this stream may then repeat it). */
  duplicate?: true
  /** An early result (`earlyEvery`): the window is still open, and this is its aggregate so far. */
  early?: true
}

/** Refuse bad `windowed()` options, naming the option and the value. */
export function checkOptions<V, K extends Key, A>(o: WindowOptions<V, K, A>): void {
  if (typeof o !== 'object' || o === null) throw new InvalidArgumentError(`windowed() needs options, got ${String(o)}`)
  const kind = (o.window as { kind?: unknown } | undefined)?.kind
  if (kind !== 'tumbling' && kind !== 'hopping' && kind !== 'session')
    throw new InvalidArgumentError(`windowed() window must be tumbling(ms), hopping(ms, advanceMs) or session(gapMs)`)
  if (kind === 'session' && typeof o.merge !== 'function')
    throw new InvalidArgumentError(
      `windowed() with session windows needs merge(earlier, later): an event may join two sessions`,
    )
  if (typeof o.to !== 'string')
    throw new InvalidArgumentError(`windowed() to must be a topic name, got ${String(o.to)}`)
  if (typeof o.initial !== 'function' || typeof o.add !== 'function')
    throw new InvalidArgumentError(`windowed() needs initial() and add(aggregate, message) functions`)
  const l = o.latenessMs ?? 0
  if (typeof l !== 'number' || !Number.isSafeInteger(l) || l < 0)
    throw new InvalidArgumentError(`windowed() latenessMs must be a non-negative integer, got ${String(l)}`)
  const i = o.idleMs
  if (i !== undefined && (typeof i !== 'number' || !Number.isSafeInteger(i) || i <= 0))
    throw new InvalidArgumentError(`windowed() idleMs must be a positive integer (ms), got ${String(i)}`)
  const e = o.earlyEvery
  if (e !== undefined && (typeof e !== 'number' || !Number.isSafeInteger(e) || e <= 0))
    throw new InvalidArgumentError(`windowed() earlyEvery must be a positive integer (messages), got ${String(e)}`)
}
