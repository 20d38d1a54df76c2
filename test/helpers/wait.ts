// The one place the tests wait: `until` polls observable state; `sleep` is for the few tests where
// time itself is the subject (backoff, delays) or where a test asserts that something does NOT
// happen within a while.

/**
 * "At once", as a bound a loaded machine cannot break. Tests that check something ends or answers
 * promptly compare with it; what they catch waits out a long timer (a blocking read's 5 s, a backoff
 * or session timeout of 10 s and more) or never ends. The product's own latency goals are the
 * benchmarks' business (`npm run bench`), not a test's.
 */
export const PROMPT_MS = 2500

/**
 * Resolve after `ms` milliseconds; rejects with the signal's reason when `signal` aborts first (the
 * timer and the listener are removed either way).
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason as Error)
  return new Promise<void>((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer)
      reject(signal?.reason as Error)
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

/**
 * Poll `check` every 10 ms until it is true; rejects naming `what` when `ms` pass first. A check
 * that throws counts as "not yet" (state read in the middle of a change, such as a Cluster promoting
 * a replica, may not be readable for a moment); the timeout's message carries its last failure.
 */
export async function until(check: () => boolean | Promise<boolean>, ms = 10_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + ms
  for (;;) {
    let failure: unknown
    try {
      if (await check()) return
    } catch (e) {
      failure = e
    }
    if (Date.now() > deadline) {
      const last =
        failure === undefined
          ? ''
          : ` (last check failed: ${failure instanceof Error ? failure.message : String(failure)})`
      throw new Error(
        `Timed out after ${ms} ms waiting for ${what}${last}`,
        failure === undefined ? undefined : { cause: failure },
      )
    }
    await sleep(10)
  }
}

/** `p`, or a rejection naming `what` when `ms` pass first (the timer is removed either way). */
export async function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Timed out after ${ms} ms waiting for ${what}`)), ms)
  })
  try {
    return await Promise.race([p, late])
  } finally {
    clearTimeout(timer)
  }
}
