import { resolveBackoff, backoffDelay, type Backoff, type BackoffOptions } from './backoff.js'
import { booleanOption, integerOption, optionsObject, signalOption } from './options.js'
import { InvalidArgumentError } from '../core/errors.js'
import type { Settleable } from './settleable.js'

/** The work `retry` repeats for one message; `attempt` counts from 1. A throw or rejection fails the attempt. */
export type RetryHandler<T> = (message: T, attempt: number) => unknown

/** Options of `retry` (and `retryRx`). */
export interface RetryOptions {
  /**
   * Most handler calls per message (an integer ≥ 1; `1` means no retry).
   * @example
   * ```ts
   * pipe(consumer, retry(send, { attempts: 5 }))
   * ```
   */
  attempts: number
  /**
   * Waits between attempts (see {@link BackoffOptions}).
   * @default { initialMs: 100, maxMs: 30000, multiplier: 2, jitter: 0.2 }
   * @example
   * ```ts
   * pipe(consumer, retry(send, { attempts: 5, backoff: { initialMs: 500, maxMs: 10_000 } }))
   * ```
   */
  backoff?: BackoffOptions
  /**
   * Whether a failed attempt may be retried; `false` gives up at once (e.g. for validation errors).
   * If it throws, the message is nacked and its error ends the iteration.
   * @default every error is retried
   * @example
   * ```ts
   * pipe(consumer, retry(send, { attempts: 5, retryIf: (e) => !(e instanceof ValidationError) }))
   * ```
   */
  retryIf?: (error: unknown) => boolean
  /**
   * What to do with a message that failed for good: `true` → `term(reason)` (the consumer sends it
   * to its dead-letter topic, if it has one, with the error message as `x-dead-letter-reason`);
   * `false` → `nack()` (deliver it again).
   * @default true
   * @example
   * ```ts
   * pipe(consumer, retry(send, { attempts: 3, deadLetter: false }))
   * ```
   */
  deadLetter?: boolean
  /**
   * Aborting ends the iteration at once with `AbortError`, even during a handler call or a backoff
   * wait; the message being worked on stays unsettled.
   * @default undefined (not abortable)
   * @example
   * ```ts
   * pipe(consumer, retry(send, { attempts: 3, signal: controller.signal }))
   * ```
   */
  signal?: AbortSignal
}

/** What `retry` emits for each message, after settling it. */
export type RetryResult<T> =
  | { readonly message: T; readonly ok: true; readonly attempts: number }
  | { readonly message: T; readonly ok: false; readonly attempts: number; readonly error: unknown }

/** {@link RetryOptions} checked and with defaults applied: the policy both `retry` and `retryRx` follow. */
export interface RetryPolicy {
  readonly attempts: number
  readonly backoff: Backoff
  readonly retryIf: ((error: unknown) => boolean) | undefined
  readonly deadLetter: boolean
  readonly signal: AbortSignal | undefined
}

/** Check {@link RetryOptions}; throws `InvalidArgumentError` naming the bad value. */
export function resolveRetryOptions<T>(
  where: string,
  handler: RetryHandler<T>,
  options: RetryOptions | undefined,
): RetryPolicy {
  if (typeof handler !== 'function')
    throw new InvalidArgumentError(`${where}: the handler must be a function, got ${typeof handler}`)
  const o = optionsObject<RetryOptions>(where, options)
  if (o.retryIf !== undefined && typeof o.retryIf !== 'function') {
    throw new InvalidArgumentError(`${where}: retryIf must be a function, got ${typeof o.retryIf}`)
  }
  return {
    attempts: integerOption(where, 'attempts', o.attempts, 1),
    backoff: resolveBackoff(where, o.backoff),
    retryIf: o.retryIf,
    deadLetter: booleanOption(where, 'deadLetter', o.deadLetter, true),
    signal: signalOption(where, o.signal),
  }
}

/**
 * Whether to call the handler again after attempt `attempt` failed with `error`: never beyond
 * `attempts`, and only if `retryIf` (when given) says yes. `retryIf`'s own error propagates.
 */
export function shouldRetry(policy: RetryPolicy, attempt: number, error: unknown): boolean {
  if (attempt >= policy.attempts) return false
  return policy.retryIf === undefined || Boolean(policy.retryIf(error))
}

/** The wait before attempt `attempt + 1`. */
export function retryDelay(policy: RetryPolicy, attempt: number): number {
  return backoffDelay(policy.backoff, attempt)
}

/** Settle a message that failed for good: `term(reason)`, or `nack()` with `deadLetter: false`. */
export function giveUp(policy: RetryPolicy, message: Settleable, error: unknown): void {
  if (policy.deadLetter) message.term(reasonOf(error))
  else message.nack()
}

/** The dead-letter reason for an error: its message. */
export function reasonOf(error: unknown): string {
  if (error instanceof Error) return error.message || error.name
  if (typeof error === 'string') return error
  try {
    return JSON.stringify(error) ?? String(error)
  } catch {
    return String(error)
  }
}
