import type { Wake } from '../stream/wake.js'

/**
 * Wait until `drained()` (nothing in flight), or until `timeoutMs` have passed. Event-driven: the
 * member wakes `wake` on every change that can drain it (a settlement, a hand-back, a dropped
 * partition), and one timer ends the wait at the deadline. No polling.
 */
export async function drain(wake: Wake, drained: () => boolean, timeoutMs: number): Promise<void> {
  if (drained()) return
  const deadline = new AbortController()
  const timer = setTimeout(() => deadline.abort(), timeoutMs)
  try {
    for (;;) {
      wake.take() // before the check: a wake during it is not lost
      if (drained() || deadline.signal.aborted) return
      await wake.wait(deadline.signal)
    }
  } finally {
    clearTimeout(timer)
  }
}
