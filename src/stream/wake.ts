/**
 * A level-triggered wake-up: `wake()` sets a flag and resolves the current waiter; `wait()` returns
 * at once if the flag is already set. Callers clear the flag (`take()`) *before* checking for data,
 * so a wake that arrives while they read is never lost.
 */
export class Wake {
  private flag = false
  private waiter: (() => void) | undefined

  // A method, not a bound arrow per instance: every settled message wakes one, and calls to one
  // shared function are inlined where calls to per-instance closures are not.
  wake(): void {
    this.flag = true
    const w = this.waiter
    if (w === undefined) return
    this.waiter = undefined
    w()
  }

  /** Clear and return the flag. */
  take(): boolean {
    const f = this.flag
    this.flag = false
    return f
  }

  /** Resolve on the next wake (or at once if one is pending). Cheaper than `wait`: no abort listener. */
  next(): Promise<void> {
    if (this.flag) return Promise.resolve()
    return new Promise<void>((resolve) => {
      this.waiter = resolve
    })
  }

  /** Resolve on the next wake (or at once if one is pending); resolve early when `signal` aborts. */
  wait(signal: AbortSignal, timeoutMs?: number): Promise<void> {
    if (this.flag || signal.aborted) return Promise.resolve()
    return new Promise<void>((resolve) => {
      let timer: NodeJS.Timeout | undefined
      const done = () => {
        signal.removeEventListener('abort', done)
        if (timer) clearTimeout(timer)
        if (this.waiter === done) this.waiter = undefined
        resolve()
      }
      this.waiter = done
      signal.addEventListener('abort', done, { once: true })
      if (timeoutMs !== undefined) timer = setTimeout(done, timeoutMs)
    })
  }
}
