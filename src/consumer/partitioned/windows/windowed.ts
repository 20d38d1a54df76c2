import { InvalidArgumentError } from '../../../core/errors.js'
import type { Key } from '../../../core/types.js'
import type { BatchIterator, BatchSource } from '../../../stream/batch-iterator.js'
import { MessageStream } from '../../../stream/message-stream.js'
import { GroupMessageImpl } from '../../group-message.js'
import { current, type PartitionHandle } from '../partition-message.js'
import type { Processor } from '../processor.js'
import type { ProcessorMessage, ProcessorMessageImpl } from '../processor-message.js'
import type { PartitionState } from '../state/partition-state.js'
import { MAX_STATE_WRITES } from '../state/state-store.js'
import { FixedWindows } from './fixed-windows.js'
import { SessionWindows } from './session-windows.js'
import { WindowIndex } from './window-index.js'
import type { WindowSpec } from './window-spec.js'
import type { Windowing } from './windowing.js'

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
}

/**
 * The watermark's key in the state, written when a message closes windows. Every window a message
 * writes carries the watermark after it too (`m`), so a message that only adds to windows writes
 * one key, not two; the watermark restored is the largest of them.
 */
const WM = 'wm'

function checkOptions<V, K extends Key, A>(o: WindowOptions<V, K, A>): void {
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
}

/**
 * Event-time windows over a processor with a state store (README "Windows"; docs/processing.md):
 * each message is added to the aggregate of every window of its key its event time falls in
 * (tumbling, hopping: fixed windows; session: joining the key's sessions it is near); once the
 * partition's watermark (the largest event time seen, less `latenessMs`) passes a window's end,
 * its result is sent to `to` as an output of a message that found it closed, and the window leaves
 * the state. Results are stored exactly once across kills and rebalances
 * (outputs and state of the processor). Iterating the stream runs the processor: it yields each
 * result once stored, and acks every message.
 */
export function windowed<V, K extends Key, A>(
  proc: Processor<V, K>,
  options: WindowOptions<V, K, A>,
): MessageStream<WindowResult<A, K>> {
  checkOptions(options)
  return new MessageStream<WindowResult<A, K>>({ open: () => new WindowedSource(proc, options) })
}

/** A partition's open windows and watermark, as of its state's generation. */
interface Indexed {
  generation: number
  index: WindowIndex
  wm: number
}

class WindowedSource<V, K extends Key, A> implements BatchSource<WindowResult<A, K>> {
  private it: BatchIterator<ProcessorMessage<V, K>> | undefined
  /** The processor's next batch, being read. */
  private reading: Promise<ProcessorMessage<V, K>[] | undefined> | undefined
  /** The processor's iteration ended. */
  private ended = false
  /** Results stored, not yet yielded; results sent, not yet settled. */
  private readonly ready: WindowResult<A, K>[] = []
  private pending = 0
  /** Wakes a `next` waiting for a batch or a result. */
  private wake: (() => void) | undefined
  private readonly indexes = new WeakMap<PartitionState, Indexed>()
  private readonly lateness: number
  private readonly windows: Windowing<A>
  /** Most windows one message closes: its state writes stay within a message's. */
  private readonly closeLimit: number

  constructor(
    private readonly proc: Processor<V, K>,
    private readonly o: WindowOptions<V, K, A>,
  ) {
    this.lateness = o.latenessMs ?? 0
    const w = o.window
    this.windows =
      w.kind === 'session' ? new SessionWindows<A>(w, o.merge as (a: A, b: A) => A) : new FixedWindows<A>(w)
    // Its own writes: the watermark, and a key per window its event goes in.
    this.closeLimit = MAX_STATE_WRITES - 1 - (w.kind === 'session' ? 1 : Math.ceil(w.sizeMs / w.advanceMs))
  }

  async next(signal: AbortSignal): Promise<WindowResult<A, K>[] | undefined> {
    const it = (this.it ??= this.proc.iterate(signal))
    for (;;) {
      // Results stored since the last call go first; the processing does not wait for them.
      if (this.ready.length > 0) return this.ready.splice(0)
      if (this.ended && this.pending === 0) return undefined
      const batch = this.ended ? undefined : (this.reading ??= it.nextBatch())
      const stored = new Promise<void>((resolve) => (this.wake = resolve))
      const got = await (batch === undefined ? stored.then(() => null) : Promise.race([batch, stored.then(() => null)]))
      if (got === null) continue // a result was stored (or failed)
      this.reading = undefined
      if (got === undefined) {
        this.ended = true
        continue
      }
      for (const m of got) {
        if (!current(GroupMessageImpl.handle(m as unknown as GroupMessageImpl<V, PartitionHandle>))) continue
        this.process(m)
      }
    }
  }

  /** A result sent: yielded once stored (not if it failed: its message comes again, and so does it). */
  private track(sent: Promise<WindowResult<A, K> | undefined>): void {
    this.pending++
    void sent.then((r) => {
      this.pending--
      if (r !== undefined) this.ready.push(r)
      this.wake?.()
    })
  }

  close(): Promise<void> | void {
    return this.it?.finish()
  }

  /** The open windows and watermark of `m`'s partition, rebuilt from the state when it was restored or rewound. */
  private indexOf(m: ProcessorMessage<V, K>): Indexed {
    const at = (m as unknown as ProcessorMessageImpl<V>).stateOf()
    // Its partition is gone: nothing it does is kept.
    if (at === undefined) return { generation: -1, index: new WindowIndex(), wm: -Infinity }
    const had = this.indexes.get(at.state)
    if (had !== undefined && had.generation === at.generation) return had
    const index = new WindowIndex()
    let wm = m.state.get<number>(WM) ?? -Infinity
    for (const [k, v] of m.state.entries()) {
      if (typeof k !== 'string') continue
      const mark = this.windows.reindex(index, k, v)
      if (mark !== undefined && mark > wm) wm = mark
    }
    const made = { generation: at.generation, index, wm }
    this.indexes.set(at.state, made)
    return made
  }

  private process(m: ProcessorMessage<V, K>): void {
    const o = this.o
    const st = m.state
    const at = this.indexOf(m)
    const index = at.index
    const t = o.eventTime === undefined ? m.timestamp : o.eventTime(m)
    if (typeof t !== 'number' || !Number.isFinite(t))
      throw new InvalidArgumentError(
        `windowed() event time of ${m.topic}/${m.partition}@${m.offset} is not a finite number: ${String(t)}`,
      )
    const wm = Math.max(at.wm, t - this.lateness) // after this message
    const add = (a: A | undefined): A => o.add(a === undefined ? o.initial() : a, m)
    if (!this.windows.place({ st, index, key: m.key, t, wm: at.wm, mark: wm, add })) {
      o.onLate?.(m)
      if (o.lateTo !== undefined)
        m.send(o.lateTo, m.key, m.value, { headers: m.headers, timestamp: m.timestamp }).catch(() => undefined)
    }
    at.wm = wm
    // Windows the watermark passed, as many as the message may still write (the rest go with the next ones).
    const closed = this.windows.close(st, index, wm, this.closeLimit)
    if (closed.length > 0) st.set(WM, wm) // the windows that carried it are gone
    for (const w of closed) {
      const k = w.key as K
      this.track(
        m.send(o.to, k, { start: w.start, end: w.end, value: w.value }, { timestamp: w.end - 1 }).then(
          (r) => ({
            key: k,
            start: w.start,
            end: w.end,
            value: w.value,
            partition: m.partition,
            offset: r.offset,
            ...(r.duplicate ? { duplicate: true as const } : {}),
          }),
          () => undefined, // the message comes again (its ack fails): so does the result
        ),
      )
    }
    m.ack()
  }
}
