import type { OutputMetadata } from '../output-record.js'
import type { Outputs } from '../outputs.js'
import type { PartitionState } from '../state/partition-state.js'
import type { ProcessorState } from '../state/processor-state.js'
import { TIMER_SEQ } from '../state/timer-turn.js'
import { TURN_KEY, WM_KEY, type ClosedWindow, type TurnRecord, type WindowLane, type Windowing } from './windowing.js'

/** Pause before a turn that failed midway is finished again. */
const RETRY_MS = 1000

/** What the idle windows need of their `windowed()` stream. */
export interface LaneHost<A, M> {
  readonly windows: Windowing<A>
  /** Most windows one turn closes (its writes stay within a message's). */
  readonly closeLimit: number
  readonly to: string
  /** The lane of `state`'s partition (built, and a decided turn resumed, when missing). */
  laneOf(state: PartitionState, generation: number): WindowLane<M>
  /** Build `lane` again from the partition's state (a turn failed midway). */
  reload(state: PartitionState, lane: WindowLane<M>): void
  /** Process the messages held while a turn ran. */
  release(lane: WindowLane<M>): void
  /** A window's result, sent by a turn of partition `partition`. */
  result(sent: Promise<OutputMetadata>, w: ClosedWindow<A>, partition: number): void
  /** A failure to report (not a fenced or closed partition's). */
  failed(e: unknown): void
}

/**
 * Windows closed on idle partitions (`WindowOptions.idleMs`; decision 208). A partition is idle
 * when it is caught up (its position is the input's end), every message it handed out is flushed,
 * and nothing came for `idleMs`; its watermark then moves on with the wall clock, by the time since
 * its last message (or its last turn), and the windows it passes are closed by a timer turn of the
 * partition: the new watermark is stored first (the decision), then the windows' results are sent,
 * then the windows leave the state, each step named after the partition's next input. A turn
 * found decided in a restored state is finished before any message of the partition is processed,
 * with the same windows in the same order, so its results are recognised and none is sent twice or
 * lost; a message never closes a window a turn decided to close, since the watermark it meets is
 * the turn's.
 */
export class IdleWindows<A, M> {
  private timer: NodeJS.Timeout | undefined
  private scanning = false

  constructor(
    private readonly host: LaneHost<A, M>,
    private readonly store: ProcessorState | undefined,
    private readonly outputs: Outputs | undefined,
    private readonly idleMs: number | undefined,
  ) {}

  /** Look for idle partitions every quarter of `idleMs` (between 5 ms and 1 s), unless `idleMs` is unset. */
  start(): void {
    if (this.idleMs === undefined || this.store === undefined || this.timer !== undefined) return
    this.timer = setInterval(() => void this.scan(), Math.min(1000, Math.max(5, Math.floor(this.idleMs / 4))))
    this.timer.unref()
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer)
    this.timer = undefined
  }

  /** Whether `state` records a turn decided and not finished. */
  static decided(state: PartitionState): boolean {
    return (state.get(TURN_KEY) as TurnRecord | undefined)?.w !== undefined
  }

  /** Run a turn of `state`'s partition: finish the one its state records, after deciding one on watermark `wm` if given. */
  run(state: PartitionState, lane: WindowLane<M>, wm?: number): void {
    lane.busy = true
    void this.turns(state, lane, wm).then(
      () => {
        lane.busy = false
        this.host.release(lane)
      },
      (e: unknown) => {
        this.host.failed(e)
        // The lane's index may have lost windows still in the state: build it again from the state.
        this.host.reload(state, lane)
        if (!IdleWindows.decided(state)) {
          lane.busy = false
          return this.host.release(lane)
        }
        const t = setTimeout(() => this.run(state, lane), RETRY_MS)
        t.unref()
      },
    )
  }

  private async turns(state: PartitionState, lane: WindowLane<M>, wm: number | undefined): Promise<void> {
    const store = this.store as ProcessorState
    const outputs = this.outputs as Outputs
    let tk = state.get(TURN_KEY) as TurnRecord | undefined
    if (wm !== undefined) {
      // The decision, stored before any result: a new watermark, named after the next input.
      const o = state.part.position
      const t = store.turn(state, outputs, o, tk?.o === o ? tk.s : TIMER_SEQ)
      if (t === undefined) return
      t.set(WM_KEY, wm)
      const next: TurnRecord = { o, s: t.seqAfterCommit(1), w: wm }
      t.set(TURN_KEY, next)
      await t.commit()
      tk = next
    }
    while (tk?.w !== undefined) {
      const w = tk.w
      const t = store.turn(state, outputs, tk.o, tk.s)
      if (t === undefined) return
      if (w > lane.wm) lane.wm = w
      const closed = this.host.windows.close(t, lane.index, w, this.host.closeLimit)
      const partition = state.part.partition
      const sent = closed.map((c) => {
        const r = t.send(this.host.to, c.key, { start: c.start, end: c.end, value: c.value }, { timestamp: c.end - 1 })
        this.host.result(r, c, partition)
        return r
      })
      // Every result stored before its window leaves the state (a crash between: they are sent again, and recognised).
      await Promise.all(sent)
      const next: TurnRecord = { o: tk.o, s: t.seqAfterCommit(1) }
      if (lane.index.first <= w) next.w = w // more than one turn's worth: the next turn closes the rest
      t.set(TURN_KEY, next)
      await t.commit()
      tk = next
    }
  }

  /** Decide a turn for each partition idle for `idleMs` whose watermark, moved on by the wall clock, closes a window. */
  private async scan(): Promise<void> {
    if (this.scanning || this.store === undefined) return
    this.scanning = true
    const held: Array<[PartitionState, WindowLane<M>]> = []
    try {
      const now = Date.now()
      for (const state of this.store.restored()) {
        const part = state.part
        if (part.lost || part.dropped || part.revoking || part.releasing) continue
        const lane = this.host.laneOf(state, part.generation)
        if (lane.busy || lane.held.length > 0 || !state.quiet()) continue
        const quiet = now - lane.quietSince
        if (quiet < (this.idleMs as number) || lane.index.first > lane.wm + quiet) continue
        lane.busy = true // its messages wait while the input's end is read
        held.push([state, lane])
      }
      if (held.length === 0) return
      const ends = await this.store.inputEnds()
      for (const [state, lane] of held.splice(0)) {
        const part = state.part
        const caughtUp = ends.get(part.partition) === part.position && lane.held.length === 0 && state.quiet()
        if (!caughtUp || part.lost || part.dropped || part.generation !== lane.generation) {
          lane.busy = false
          this.host.release(lane)
          continue
        }
        const at = Date.now()
        const wm = lane.wm + (at - lane.quietSince)
        lane.quietSince = at
        this.run(state, lane, wm)
      }
    } catch (e) {
      this.host.failed(e)
    } finally {
      for (const [, lane] of held) {
        lane.busy = false
        this.host.release(lane)
      }
      this.scanning = false
    }
  }
}
