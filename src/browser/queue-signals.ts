/**
 * The two waits of a reader's batch queue: its consumer waiting for data (`data`), and its
 * producer waiting for room (`room`). `signal` wakes both (something changed: look again);
 * `roomFreed` wakes the producer only.
 */
export class QueueSignals {
  private wake: (() => void) | undefined
  private space: (() => void) | undefined

  /** Resolves at the next `signal`. */
  data(): Promise<void> {
    return new Promise<void>((resolve) => (this.wake = resolve))
  }

  /** Resolves at the next `roomFreed` or `signal`. */
  room(): Promise<void> {
    return new Promise<void>((resolve) => (this.space = resolve))
  }

  roomFreed(): void {
    const space = this.space
    this.space = undefined
    space?.()
  }

  signal(): void {
    const wake = this.wake
    this.wake = undefined
    wake?.()
    this.roomFreed()
  }
}
