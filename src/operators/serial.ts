/**
 * Runs an iterator's `next()` calls one at a time, in call order: a call made while another runs
 * (`Promise.all([it.next(), it.next()])`) waits until that one has returned. An operator's state
 * (a batch being filled, the message being handled) then belongs to one call at a time, and a
 * handler that takes messages one at a time (`retry`) does so whoever calls.
 */
export class Serial {
  #busy = false
  readonly #waiting: Array<() => void> = []

  /** Undefined when the caller may run now; else a promise of its turn. Pair with `leave()`. */
  enter(): Promise<void> | undefined {
    if (!this.#busy) {
      this.#busy = true
      return undefined
    }
    return new Promise<void>((resolve) => this.#waiting.push(resolve))
  }

  /** The running call returned: the next one waiting runs. */
  leave(): void {
    const next = this.#waiting.shift()
    if (next !== undefined) next()
    else this.#busy = false
  }
}
