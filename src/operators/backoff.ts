import { InvalidArgumentError } from '../core/errors.js'
import { numberOption, optionsObject } from './options.js'

/** How long `retry` waits between attempts: exponential growth, a ceiling and random jitter. */
export interface BackoffOptions {
  /**
   * Wait after the first failed attempt, in ms.
   * @default 100
   * @example
   * ```ts
   * retry(send, { attempts: 5, backoff: { initialMs: 250 } })
   * ```
   */
  initialMs?: number
  /**
   * Longest wait, in ms; no delay (jitter included) exceeds it.
   * @default 30000
   * @example
   * ```ts
   * retry(send, { attempts: 10, backoff: { maxMs: 5_000 } })
   * ```
   */
  maxMs?: number
  /**
   * Growth factor per failed attempt (≥ 1; `1` waits `initialMs` every time).
   * @default 2
   * @example
   * ```ts
   * retry(send, { attempts: 4, backoff: { multiplier: 3 } }) // 100, 300, 900 ms
   * ```
   */
  multiplier?: number
  /**
   * Random spread, as a fraction 0..1 of the delay: each delay is drawn uniformly from
   * `delay × (1 ± jitter)` (then capped at `maxMs`), so retries of many messages do not line up.
   * @default 0.2
   * @example
   * ```ts
   * retry(send, { attempts: 3, backoff: { jitter: 0 } }) // exactly 100, 200 ms
   * ```
   */
  jitter?: number
}

/** {@link BackoffOptions} checked and with defaults applied. */
export interface Backoff {
  readonly initialMs: number
  readonly maxMs: number
  readonly multiplier: number
  readonly jitter: number
}

/** Check {@link BackoffOptions}; throws `InvalidArgumentError` naming the bad value. */
export function resolveBackoff(where: string, options: BackoffOptions | undefined): Backoff {
  const o = optionsObject<BackoffOptions>(`${where} backoff`, options)
  const initialMs = numberOption(where, 'backoff.initialMs', o.initialMs ?? 100, 0, Number.MAX_SAFE_INTEGER)
  const maxMs = numberOption(where, 'backoff.maxMs', o.maxMs ?? Math.max(30_000, initialMs), 0, Number.MAX_SAFE_INTEGER)
  if (maxMs < initialMs)
    throw new InvalidArgumentError(`${where}: backoff.maxMs (${maxMs}) must be >= backoff.initialMs (${initialMs})`)
  return {
    initialMs,
    maxMs,
    multiplier: numberOption(where, 'backoff.multiplier', o.multiplier ?? 2, 1, Number.MAX_SAFE_INTEGER),
    jitter: numberOption(where, 'backoff.jitter', o.jitter ?? 0.2, 0, 1),
  }
}

/**
 * The wait after `failures` failed attempts (1 after the first):
 * `min(maxMs, initialMs × multiplier^(failures−1))`, spread by `± jitter` and capped at `maxMs`.
 *
 * @param random a source of numbers in [0, 1) (tests pass a fixed one).
 * @example
 * ```ts
 * backoffDelay({ initialMs: 100, maxMs: 1000, multiplier: 2, jitter: 0 }, 3) // 400
 * ```
 */
export function backoffDelay(backoff: Backoff, failures: number, random: () => number = Math.random): number {
  const { initialMs, maxMs, multiplier, jitter } = backoff
  // initialMs × multiplier^n overflows to Infinity for large n; 0 × Infinity would be NaN.
  const grown = initialMs === 0 ? 0 : initialMs * multiplier ** Math.max(0, failures - 1)
  const base = Math.min(maxMs, grown)
  const spread = jitter === 0 ? base : base * (1 + jitter * (2 * random() - 1))
  return Math.min(maxMs, Math.max(0, spread))
}
