import { PartitionLock, type LockOptions } from './partition-lock.js'

/** Keep the lock this long after a write for the next batch. */
const HOLD_IDLE_MS = 2
/** Every this long in a row, yield to a waiting process (or mark the lock as alive). */
const HOLD_MAX_MS = 20
/** After yielding, wait this long before taking the lock again. */
const COOLDOWN_MS = 3
/**
 * First pause before a release that failed (a file system turned read-only) is tried again; the
 * pause doubles up to `RELEASE_RETRY_MAX_MS`.
 */
const RELEASE_RETRY_MS = 50
const RELEASE_RETRY_MAX_MS = 1000

/**
 * A `PartitionLock` held between writes, shared by the native and the Python-TwainMQ appenders.
 * Taking the lock costs a few directory operations (create, link, unlink: 50-300 µs on ext4), more
 * than encoding a batch of a thousand records, so a writer keeps it `HOLD_IDLE_MS` after a write
 * for the next batch of a busy producer. After `HOLD_MAX_MS` in a row it checks whether another
 * process waits (a fresh `<lock>.want` marker): if so it releases and waits `COOLDOWN_MS` before
 * taking it again, so the waiter (polling every few ms) gets its turn; if not, it touches the lock
 * (alive) and keeps going without a pause.
 */
export class HeldLock {
  private readonly lock: PartitionLock
  private held = false
  private heldSince = 0
  private holdTimer: NodeJS.Timeout | undefined
  private cooldownUntil = 0

  constructor(path: string, options: LockOptions = {}) {
    this.lock = new PartitionLock(path, options)
  }

  /** Hold the lock now, synchronously, if it is still ours or free; false otherwise. */
  tryNow(): boolean {
    if (this.keep()) return true
    if (Date.now() < this.cooldownUntil || !this.lock.tryAcquire()) return false
    this.heldSince = Date.now()
    return true
  }

  /** Hold the lock, waiting for it (`TimeoutError` after the acquire timeout). */
  async take(): Promise<void> {
    if (this.keep()) return
    const wait = Math.min(this.cooldownUntil - Date.now(), COOLDOWN_MS)
    if (wait > 0) await new Promise((r) => setTimeout(r, wait))
    await this.lock.acquire()
    this.heldSince = Date.now()
  }

  /** Whether the lock file is still ours: checked right before every write (fencing). */
  owns(): boolean {
    return this.lock.stillHeld()
  }

  /**
   * A write under the lock succeeded: keep the lock a moment for the next one (or yield it). Never
   * throws: the write it follows is stored (see `expire`).
   */
  written(): void {
    const now = Date.now()
    if (now - this.heldSince > HOLD_MAX_MS || now < this.heldSince) {
      let yieldNow: boolean
      try {
        yieldNow = this.lock.othersWaiting() || !this.lock.stillHeld()
      } catch {
        yieldNow = true // the directory cannot be read: release (or keep it, as `expire` says)
      }
      if (yieldNow) {
        this.cooldownUntil = now + COOLDOWN_MS
        this.expire(RELEASE_RETRY_MS)
        return
      }
      this.lock.touch()
      this.heldSince = now // nobody waits: keep going without a pause
    }
    this.held = true
    this.holdTimer = setTimeout(() => this.expire(RELEASE_RETRY_MS), HOLD_IDLE_MS)
    this.holdTimer.unref()
  }

  /**
   * Release the kept lock without throwing: a timer's callback, or after a stored write. When the
   * lock file cannot be removed (a file system turned read-only), the lock stays held, for this
   * writer's next write, and is tried again after `retryMs` (doubled each time, up to
   * `RELEASE_RETRY_MAX_MS`), so other processes get it once the file system is writable again.
   */
  private expire(retryMs: number): void {
    try {
      this.release()
    } catch {
      this.held = true
      this.holdTimer = setTimeout(() => this.expire(Math.min(retryMs * 2, RELEASE_RETRY_MAX_MS)), retryMs)
      this.holdTimer.unref()
    }
  }

  /** Release the lock now (after a failed write, on close, or when the hold expires). */
  release(): void {
    this.held = false
    clearTimeout(this.holdTimer)
    this.lock.release()
  }

  /** Release, and remove the lock's owner file (the writer is closing). */
  dispose(): void {
    this.release()
    this.lock.dispose()
  }

  /** True when we hold the lock from a previous write and may go on using it. */
  private keep(): boolean {
    if (!this.held) return false
    clearTimeout(this.holdTimer)
    this.held = false
    // Fencing: callers write synchronously after this, so checking here is checking right before
    // the write. A lock broken meanwhile (only ever of an owner judged dead or unseen) is not ours.
    if (!this.lock.stillHeld()) {
      this.lock.release()
      return false
    }
    return true
  }
}
