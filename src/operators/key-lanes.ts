/**
 * Scheduling for `ack` (and `ackRx`) with `concurrency > 1`: at most `limit` items run at once, and
 * items of one lane (one key) run one after another, in the order they were pushed.
 *
 * An item is *ready* when no other item of its lane is ready or running; ready items start in the
 * order they became ready, whenever a slot is free. The rest wait in their lane behind the item
 * that holds it. This is pure bookkeeping (no promises, no timers), shared by the AsyncIterable and
 * the RxJS operator.
 *
 * @example
 * ```ts
 * const lanes = new KeyLanes<Msg>(2, (m) => laneOf(m.key))
 * lanes.push(a1); lanes.push(a2); lanes.push(b1)
 * lanes.take()      // [a1, b1]: a2 waits behind a1
 * lanes.finish(a1)
 * lanes.take()      // [a2]
 * ```
 */
export class KeyLanes<T> {
  readonly #limit: number
  readonly #laneOf: ((item: T) => string | undefined) | undefined
  /** Items that hold their lane (or have none) and wait for a slot. */
  readonly #ready: T[] = []
  /** Lane → items waiting behind the one that holds the lane. A lane is held while it is in the map. */
  readonly #lanes = new Map<string, T[]>()
  #running = 0
  #waiting = 0

  /**
   * @param limit most items running at once (≥ 1).
   * @param laneOf the lane of an item; `undefined` (or no function) means no ordering constraint.
   */
  constructor(limit: number, laneOf?: (item: T) => string | undefined) {
    this.#limit = limit
    this.#laneOf = laneOf
  }

  /** Items running (taken and not finished). */
  get running(): number {
    return this.#running
  }

  /** Items pushed and not yet taken. */
  get waiting(): number {
    return this.#waiting
  }

  /** Queue an item. */
  push(item: T): void {
    this.#waiting++
    const lane = this.#laneOf?.(item)
    if (lane !== undefined) {
      const behind = this.#lanes.get(lane)
      if (behind) {
        behind.push(item)
        return
      }
      this.#lanes.set(lane, [])
    }
    this.#ready.push(item)
  }

  /** The items that may start now; each counts as running until `finish(item)`. */
  take(): T[] {
    const started: T[] = []
    while (this.#running < this.#limit && this.#ready.length > 0) {
      started.push(this.#ready.shift() as T)
      this.#running++
      this.#waiting--
    }
    return started
  }

  /** A running item is done: its slot is free and the next item of its lane becomes ready. */
  finish(item: T): void {
    this.#running--
    const lane = this.#laneOf?.(item)
    if (lane === undefined) return
    const behind = this.#lanes.get(lane)
    const next = behind?.shift()
    if (next === undefined) this.#lanes.delete(lane)
    else this.#ready.push(next)
  }

  /** Take every item not yet started (ready or waiting behind its key), e.g. to release them. */
  drain(): T[] {
    const out = this.#ready.splice(0)
    for (const queued of this.#lanes.values()) out.push(...queued.splice(0))
    this.#waiting = 0
    return out
  }
}
