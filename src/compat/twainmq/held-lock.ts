import { PartitionLock } from '../../backends/file/partition-lock.js'

/** Keep the lock this long after a write for the next one. */
const HOLD_IDLE_MS = 2
/** Never keep it longer than this in a row. */
const HOLD_MAX_MS = 20
/** After giving it up at HOLD_MAX_MS, wait this long before taking it again. */
const COOLDOWN_MS = 3

/**
 * The native appender's cross-process `PartitionLock`, held briefly between appends as the native
 * appender holds it (decisions.md 13): taking it costs two directory operations, far more than
 * writing a line, so it is kept HOLD_IDLE_MS after a write for the next one, at most HOLD_MAX_MS in a
 * row, then released for COOLDOWN_MS so other processes get their turn. A dead holder's lock is broken
 * at once (its pid is gone). Python TwainMQ writers never take it.
 */
export class HeldLock {
  private readonly lock: PartitionLock
  private held = false
  private heldSince = 0
  private holdTimer: NodeJS.Timeout | undefined
  private cooldownUntil = 0

  constructor(path: string) {
    this.lock = new PartitionLock(path)
  }

  /** Hold the lock now, synchronously, if it is still ours or free; false otherwise. */
  tryNow(): boolean {
    if (this.keep()) return true
    if (Date.now() < this.cooldownUntil || !this.lock.tryAcquire()) return false
    this.heldSince = Date.now()
    return true
  }

  /** Hold the lock, waiting for it (`TimeoutError` after 30 s). */
  async take(): Promise<void> {
    if (this.keep()) return
    const wait = Math.min(this.cooldownUntil - Date.now(), COOLDOWN_MS)
    if (wait > 0) await new Promise((r) => setTimeout(r, wait))
    await this.lock.acquire()
    this.heldSince = Date.now()
  }

  /** A write under the lock succeeded: keep the lock a moment for the next one (or release it). */
  written(): void {
    const age = Date.now() - this.heldSince
    if (age > HOLD_MAX_MS || age < 0) {
      this.lock.release()
      this.cooldownUntil = Date.now() + COOLDOWN_MS
      return
    }
    this.held = true
    this.holdTimer = setTimeout(() => this.release(), HOLD_IDLE_MS)
    this.holdTimer.unref()
  }

  /** Release the lock now (after a failed write, on close, or when the hold expires). */
  release(): void {
    this.held = false
    clearTimeout(this.holdTimer)
    this.lock.release()
  }

  /** True when we hold the lock from a previous write and may go on using it. */
  private keep(): boolean {
    if (!this.held) return false
    clearTimeout(this.holdTimer)
    this.held = false
    const age = Date.now() - this.heldSince
    if (age > HOLD_MAX_MS || age < 0 || !this.lock.stillHeld()) {
      this.lock.release()
      this.cooldownUntil = Date.now() + COOLDOWN_MS
      return false
    }
    return true
  }
}
