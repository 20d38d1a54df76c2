import { InvalidArgumentError } from '../../../core/errors.js'
import type { Key } from '../../../core/types.js'
import { MessageStream } from '../../../stream/message-stream.js'
import type { OutputMetadata } from '../output-record.js'
import { copiedHeaders } from '../copied-headers.js'
import { Processor } from '../processor.js'
import { isCurrent, noResult, ResultSource } from '../result-source.js'
import type { ProcessorMessage, ProcessorMessageImpl } from '../processor-message.js'
import type { PartitionState } from '../state/partition-state.js'
import type { ProcessorState } from '../state/processor-state.js'
import { MAX_STATE_WRITES } from '../state/state-store.js'
import { FixedWindows } from './fixed-windows.js'
import { SessionWindows } from './session-windows.js'
import { WindowIndex } from './window-index.js'
import { WindowRun } from './window-run.js'
import { checkOptions, type WindowOptions, type WindowResult } from './window-options.js'
import { IdleWindows, type LaneHost } from './idle-windows.js'
import {
  WM_KEY,
  type ClosedWindow,
  type Placement,
  type TouchedWindow,
  type WindowLane,
  type Windowing,
} from './windowing.js'

/**
 * Event-time windows over a processor with a state store (README "Windows"; docs/processing.md):
 * each message is added to the aggregate of every window of its key its event time falls in
 * (tumbling, hopping: fixed windows; session: joining the key's sessions it is near); once the
 * partition's watermark (the largest event time seen, less `latenessMs`) passes a window's end,
 * its result is sent to `to` as an output of a message that found it closed (or, with `idleMs`, of
 * a timer turn of the idle partition: `IdleWindows`), and the window leaves the state. Results are
 * stored exactly once across kills and rebalances (outputs and state of the processor). Iterating the stream runs the processor: it yields each
 * result once stored, and acks every message.
 */
export function windowed<V, K extends Key, A>(
  proc: Processor<V, K>,
  options: WindowOptions<V, K, A>,
): MessageStream<WindowResult<A, K>> {
  checkOptions(options)
  return new MessageStream<WindowResult<A, K>>({ open: () => new WindowedSource(proc, options) })
}

/** A partition's windows, with the run of its messages being placed (`WindowRun`). */
interface Lane<V, K extends Key> extends WindowLane<ProcessorMessage<V, K>> {
  run: WindowRun
}

class WindowedSource<V, K extends Key, A>
  extends ResultSource<ProcessorMessage<V, K>, WindowResult<A, K>>
  implements LaneHost<A, ProcessorMessage<V, K>>
{
  private readonly lanes = new WeakMap<PartitionState, Lane<V, K>>()
  /** Lanes whose run holds messages: each run ends (its writes made, its messages acked) after the batch. */
  private running: Array<Lane<V, K>> = []
  private readonly lateness: number
  readonly windows: Windowing<A>
  /** Most windows one message closes: its state writes stay within a message's. */
  readonly closeLimit: number
  readonly to: string
  private readonly idle: IdleWindows<A, ProcessorMessage<V, K>>
  private readonly store: ProcessorState | undefined
  /** The message `process` is placing, and the aggregate step over it (made once, not per message). */
  private placing: ProcessorMessage<V, K> | undefined
  private readonly add = (a: A | undefined): A =>
    this.o.add(a === undefined ? this.o.initial() : a, this.placing as ProcessorMessage<V, K>)
  private readonly placement: Placement<A> = {
    st: undefined as unknown as WindowRun,
    index: new WindowIndex(),
    key: '',
    t: 0,
    wm: 0,
    mark: 0,
    add: this.add,
    touched: undefined,
  }

  constructor(
    private readonly proc: Processor<V, K>,
    private readonly o: WindowOptions<V, K, A>,
  ) {
    super()
    this.lateness = o.latenessMs ?? 0
    this.to = o.to
    const w = o.window
    this.windows =
      w.kind === 'session' ? new SessionWindows<A>(w, o.merge as (a: A, b: A) => A) : new FixedWindows<A>(w)
    // Its own writes: the watermark, and a key per window its event goes in (a turn's: the watermark's and the turn's).
    this.closeLimit = MAX_STATE_WRITES - 1 - (w.kind === 'session' ? 1 : Math.ceil(w.sizeMs / w.advanceMs))
    const at = Processor.stateOf(proc as unknown as Processor<never, never>)
    this.store = at?.state
    this.idle = new IdleWindows(this, at?.state, at?.outputs, o.idleMs)
  }

  protected source(): Processor<V, K> {
    this.idle.start()
    return this.proc
  }

  protected override stopped(): void {
    this.idle.stop()
  }

  /** Process `m`, or hold it while a timer turn of its partition runs. */
  protected take(m: ProcessorMessage<V, K>): void {
    const impl = m as unknown as ProcessorMessageImpl<V>
    const state = impl.partitionState()
    // Its partition is gone: nothing it does is kept.
    const lane = state === undefined ? scratchLane<V, K>() : this.laneOf(state, impl.stateGeneration())
    if (lane.busy) lane.held.push(m)
    else this.process(m, lane)
  }

  release(lane: Lane<V, K>): void {
    for (const m of lane.held.splice(0)) if (isCurrent(m)) this.take(m)
    this.batchDone()
  }

  /** Every run ends: its writes made by its last message, the others acked as carried (decision 227). */
  protected override batchDone(): void {
    const lanes = this.running
    if (lanes.length === 0) return
    this.running = []
    for (const lane of lanes) this.endRun(lane.run)
  }

  private endRun(run: WindowRun): void {
    const msgs = run.msgs
    const last = msgs[msgs.length - 1]
    if (last === undefined) return
    // Its partition went back (or away) since: the messages come again, and so do their writes.
    if (!isCurrent(last)) return run.reset()
    if (run.empty) {
      run.reset()
      for (const m of msgs) m.ack()
      return
    }
    run.writeAs(last)
    for (let i = 0; i < msgs.length - 1; i++) {
      const m = msgs[i] as ProcessorMessageImpl<unknown>
      m.stateCarried = true
      m.ack()
    }
    last.ack()
  }

  result(sent: Promise<OutputMetadata>, w: ClosedWindow<A>, partition: number): void {
    this.track(sent.then((r) => this.stored(w, partition, r), noResult))
  }

  failed(e: unknown): void {
    this.store?.failed(e)
  }

  private stored(w: ClosedWindow<A>, partition: number, r: OutputMetadata, early = false): WindowResult<A, K> {
    const result: WindowResult<A, K> = {
      key: w.key as K,
      start: w.start,
      end: w.end,
      value: w.value,
      partition,
      offset: r.offset,
    }
    if (r.duplicate === true) result.duplicate = true
    if (early) result.early = true
    return result
  }

  /**
   * The result of window `w` (`early`: its aggregate so far), sent as an output of `m`: yielded once
   * stored, with no promise per result (`ProcessorMessageImpl.emit`), so results are yielded in the
   * order they were stored.
   */
  private emit(m: ProcessorMessage<V, K>, w: ClosedWindow<A>, early = false): void {
    const partition = m.partition
    const impl = m as unknown as ProcessorMessageImpl<V>
    const value = early
      ? { start: w.start, end: w.end, value: w.value, early: true }
      : { start: w.start, end: w.end, value: w.value }
    this.expect()
    impl.emit(
      this.to,
      w.key,
      value,
      { timestamp: w.end - 1 },
      (r) => this.settled(this.stored(w, partition, r, early)),
      this.unstored,
    )
  }

  /** A result that failed: the message comes again (its ack fails), and so does the result. */
  private readonly unstored = (): void => this.settled(undefined)

  /** The lane of a partition, built from its state when it was restored or rewound (a turn it records as decided is finished first). */
  laneOf(state: PartitionState, generation: number): Lane<V, K> {
    const had = this.lanes.get(state)
    if (had !== undefined && had.generation === generation) return had
    const lane: Lane<V, K> = {
      generation,
      index: new WindowIndex(),
      wm: -Infinity,
      quietSince: Date.now(),
      busy: false,
      held: [],
      run: new WindowRun(),
    }
    this.reload(state, lane)
    this.lanes.set(state, lane)
    if (IdleWindows.decided(state)) this.idle.run(state, lane)
    return lane
  }

  reload(state: PartitionState, lane: Lane<V, K>): void {
    const index = new WindowIndex()
    let wm = (state.get(WM_KEY) as number | undefined) ?? -Infinity
    for (const [k, v] of state.entries()) {
      const mark = this.windows.reindex(index, k, v)
      if (mark !== undefined && mark > wm) wm = mark
    }
    lane.index = index
    lane.wm = wm
  }

  private process(m: ProcessorMessage<V, K>, lane: Lane<V, K>): void {
    const o = this.o
    const impl = m as unknown as ProcessorMessageImpl<unknown>
    const run = lane.run
    run.begin(impl)
    const index = lane.index
    const t = o.eventTime === undefined ? m.timestamp : o.eventTime(m)
    if (typeof t !== 'number' || !Number.isFinite(t))
      throw new InvalidArgumentError(
        `windowed() event time of ${m.topic}/${m.partition}@${m.offset} is not a finite number: ${String(t)}`,
      )
    const wm = Math.max(lane.wm, t - this.lateness) // after this message
    const every = o.earlyEvery
    const early: Array<TouchedWindow<A>> | undefined = every === undefined ? undefined : []
    const touched =
      early === undefined ? undefined : (w: TouchedWindow<A>): unknown => w.n % (every as number) === 0 && early.push(w)
    this.placing = m
    let placed: boolean
    try {
      // One object for every message's placement (placing keeps none of it).
      const p = this.placement
      p.st = run
      p.index = index
      p.key = m.key
      p.t = t
      p.wm = lane.wm
      p.mark = wm
      p.touched = touched
      placed = this.windows.place(p)
    } finally {
      this.placing = undefined
    }
    if (!placed) {
      o.onLate?.(m)
      if (o.lateTo !== undefined)
        m.send(o.lateTo, m.key, m.value, { headers: copiedHeaders(m.headers), timestamp: m.timestamp }).catch(
          () => undefined,
        )
    }
    if (early !== undefined)
      for (const w of early) this.emit(m, { start: w.start, end: w.end, key: m.key, value: w.value }, true)
    lane.wm = wm
    // Only idle partitions' timer turns read it (`idleMs`).
    if (o.idleMs !== undefined) lane.quietSince = Date.now()
    // Windows the watermark passed, as many as the message may still write (the rest go with the next ones).
    const closed = this.windows.close(run, index, wm, this.closeLimit)
    if (closed.length > 0) run.set(WM_KEY, wm) // the windows that carried it are gone
    for (let i = 0; i < closed.length; i++) this.emit(m, closed[i] as ClosedWindow<A>)
    // Its writes join the run, acked with it; or, past a run's limits, the run ends before it and it writes them itself.
    if (run.take(impl.stateRecordLimit())) {
      if (run.msgs.length === 0) this.running.push(lane)
      run.msgs.push(impl)
      return
    }
    this.endRun(run)
    run.ownWrites(impl)
    m.ack()
  }
}

/** The lane of a message whose partition is gone (nothing it does is kept). */
const scratchLane = <V, K extends Key>(): Lane<V, K> => ({
  generation: -1,
  index: new WindowIndex(),
  wm: -Infinity,
  quietSince: 0,
  busy: false,
  held: [],
  run: new WindowRun(),
})
