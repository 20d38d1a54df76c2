import type { ConsumerEvents } from './events.js'

/**
 * How a member's failures reach the application: `'error'` events when something listens, else
 * a process warning once per kind; a fatal failure that iterations throw is reported there only.
 */
export class FailureReport {
  /** The fatal failure that ended the member, if any. */
  failure: unknown
  /** A fatal failure was thrown by an iteration (so it needs no warning). */
  #taken = false
  /** Failure codes already printed for want of an 'error' listener. */
  readonly #warned = new Set<string>()

  /** `twainmq <kind> <id> of group "<group>"`: who says it. */
  readonly #who: string

  constructor(
    private readonly events: ConsumerEvents,
    /** What the application calls the member (`consumer.on('error', …)`, `processor.on(…)`). */
    private readonly kind: 'consumer' | 'processor',
    memberId: string,
    group: string,
  ) {
    this.#who = `twainmq ${kind} ${memberId} of group "${group}"`
  }

  /** An iteration threw the fatal failure. */
  taken(): void {
    this.#taken = true
  }

  /** Report `e`; `viewing`: an iteration is under way (it throws a fatal failure itself). */
  error(e: unknown, viewing: boolean): void {
    // After a fatal failure, what its shutdown meets (a leave on a store that cannot be written) is its consequence.
    if (this.failure !== undefined && e !== this.failure) return
    const err = e instanceof Error ? e : new Error(String(e))
    if (this.events.has('error')) return this.events.emit('error', err)
    if (e === this.failure) {
      // A fatal failure that iterations throw is reported there, not also as a warning: one under
      // way now, or one begun by the code that runs next (`consumer(…)`, an await, then `for await`).
      if (viewing) return
      this.#taken = false
      setImmediate(() => this.#taken || this.#warn(err))
      return
    }
    this.#warn(err)
  }

  /** Nobody listens: say it once per kind of failure rather than drop it (`on('error')` handles them). */
  #warn(err: Error): void {
    const code = (err as { code?: string }).code ?? err.name
    if (this.#warned.has(code)) return
    this.#warned.add(code)
    process.emitWarning(
      `${this.#who}: ${code}: ${err.message} (no 'error' listener: ${this.kind}.on('error', …) handles these; later ${code} failures are not printed)`,
      { type: 'TwainmqWarning', code },
    )
  }
}
