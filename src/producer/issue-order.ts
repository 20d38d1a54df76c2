/** One flush's place in the order: wait for `ahead` (if any), then call `issued` once its appends are all issued. */
export interface Turn {
  /** The previous flush's appends being issued; undefined when no flush ahead is still issuing. */
  ahead: Promise<void> | undefined
  /** This flush has issued every append (idempotent). */
  issued: () => void
}

/**
 * Flushes of a producer issue their appends in flush order (a flush with an async validator must
 * not be overtaken by a later one), while their writes may still overlap. A flush with nobody
 * ahead of it still issuing goes at once: no microtask hop before its write.
 */
export class IssueOrder {
  private last: Promise<void> = Promise.resolve()
  /** Flushes whose appends are not all issued yet. */
  private unissued = 0

  take(): Turn {
    const ahead = this.unissued > 0 ? this.last : undefined
    this.unissued++
    let release!: () => void
    this.last = new Promise<void>((r) => (release = r))
    let done = false
    const issued = () => {
      if (done) return
      done = true
      this.unissued--
      release()
    }
    return { ahead, issued }
  }
}
