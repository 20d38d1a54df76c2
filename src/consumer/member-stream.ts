import type { BatchIterator, BatchSource } from '../stream/batch-iterator.js'
import { MessageStream } from '../stream/message-stream.js'
import { ConsumerEvents, type ConsumerEventMap } from './events.js'

/** Most messages one view takes at a time. */
const MAX_DELIVER = 256

/**
 * What every consumer-group member shares, whatever its mode: it is a `MessageStream` (each
 * iteration a view of the membership), has typed events, a fatal-failure path, and an idempotent
 * `close()` that runs the mode's own shutdown once.
 */
export abstract class MemberStream<T> extends MessageStream<T> implements AsyncDisposable {
  protected readonly events = new ConsumerEvents()
  protected state: 'running' | 'closing' | 'closed' = 'running'
  protected failure: unknown
  /** Live iterations (views) of this membership. */
  protected views = 0
  /** `poll()` was called: from then on the member reads ahead for polls, as for an iteration. */
  private polled = false
  private readonly viewWake = new Set<() => void>()
  private closing: Promise<void> | undefined

  /** Removes the listener on the user's `signal` (at close: a long-lived signal must not keep closed members). */
  private readonly unlistenSignal: () => void

  constructor(signal: AbortSignal | undefined, registry: Set<BatchIterator<unknown>>) {
    super(undefined, signal, registry)
    // Deferred: the iterations' own abort listeners must end them with AbortError before close() ends them quietly.
    const onAbort = () => queueMicrotask(() => void this.close().catch(() => undefined))
    signal?.addEventListener('abort', onAbort, { once: true })
    this.unlistenSignal = () => signal?.removeEventListener('abort', onAbort)
  }

  /** Hand up to `n` buffered messages to the application (marking them delivered). */
  protected abstract take(n: number): T[]
  /** Take back messages a view received but never emitted. */
  protected abstract unread(items: T[]): void
  /** Keep the process alive only while something iterates (`views > 0`). */
  protected abstract updateRefs(): void
  /** `demand` changed: start reading, or stop (and, in shared mode, hand back what was not handed out). */
  protected abstract demandChanged(): void

  /**
   * Whether anything wants messages: a live iteration, or `poll()` was called. Until then a member
   * reads nothing (it is a member all the same), so an idle consumer holds nothing.
   */
  protected get demand(): boolean {
    return this.views > 0 || this.polled
  }

  /**
   * Next buffered message, without waiting (TwainMQ's `poll`). The first call starts reading ahead
   * (up to `maxInFlight`), so it usually returns `undefined`; later calls get what arrived.
   */
  poll(): T | undefined {
    return this.pollMany(1)[0]
  }

  /** Up to `n` buffered messages, without waiting (the first call starts reading ahead, as `poll()`). */
  pollMany(n = 10): T[] {
    if (!this.polled && this.state === 'running') {
      this.polled = true
      this.demandChanged()
    }
    return this.take(Math.max(0, Math.floor(n)))
  }

  /** A view: takes buffered messages, waiting (abortably) for more; its end releases what it held. */
  protected override openSource(): BatchSource<T> {
    this.views++
    this.updateRefs()
    if (this.views === 1) this.demandChanged()
    let open = true
    return {
      next: async (signal) => {
        for (;;) {
          if (this.failure !== undefined) {
            this.failureTaken = true
            throw this.failure
          }
          if (this.state !== 'running') return undefined
          const batch = this.take(MAX_DELIVER)
          if (batch.length > 0) return batch
          await new Promise<void>((resolve) => {
            const done = () => {
              this.viewWake.delete(done)
              signal.removeEventListener('abort', done)
              resolve()
            }
            this.viewWake.add(done)
            signal.addEventListener('abort', done, { once: true })
            if (signal.aborted) done()
          })
          if (signal.aborted) return undefined
        }
      },
      unread: (items) => this.unread(items),
      close: () => {
        if (!open) return
        open = false
        this.views--
        this.updateRefs()
        if (this.views === 0) this.demandChanged()
      },
    }
  }

  /** Wake every view waiting for messages (new ones arrived, or the member is ending). */
  protected wakeViews(): void {
    for (const w of [...this.viewWake]) w()
  }

  on<E extends keyof ConsumerEventMap>(event: E, listener: (payload: ConsumerEventMap[E]) => void): () => void {
    return this.events.on(event, listener)
  }

  /** Like {@link on}, for the next event only; returns a function that removes the listener if it has not run. */
  once<E extends keyof ConsumerEventMap>(event: E, listener: (payload: ConsumerEventMap[E]) => void): () => void {
    const off = this.events.on(event, (payload) => {
      off()
      listener(payload)
    })
    return off
  }

  protected emitError(e: unknown): void {
    if (this.state === 'closed') return
    // After a fatal failure, what its shutdown meets (a leave on a store that cannot be written) is its consequence.
    if (this.failure !== undefined && e !== this.failure) return
    const err = e instanceof Error ? e : new Error(String(e))
    if (this.events.has('error')) return this.events.emit('error', err)
    if (e === this.failure) {
      // A fatal failure that iterations throw is reported there, not also as a warning: one under
      // way now, or one begun by the code that runs next (`consumer(…)`, an await, then `for await`).
      if (this.views > 0) return
      this.failureTaken = false
      setImmediate(() => this.failureTaken || this.warn(err))
      return
    }
    this.warn(err)
  }

  /** A fatal failure was thrown by an iteration (so it needs no warning). */
  private failureTaken = false

  /** Nobody listens: say it once per kind of failure rather than drop it (consumer.on('error') handles them). */
  private warn(err: Error): void {
    const code = (err as { code?: string }).code ?? err.name
    if (this.warned.has(code)) return
    this.warned.add(code)
    process.emitWarning(`${this.describe()}: ${code}: ${err.message} (no 'error' listener: consumer.on('error', …) handles these; later ${code} failures are not printed)`, { type: 'TwainmqWarning', code })
  }

  /** Failure codes already printed for want of an 'error' listener. */
  private readonly warned = new Set<string>()

  /** The group this member belongs to. */
  abstract get group(): string
  /** This member's id in the group. */
  abstract get memberId(): string

  private describe(): string {
    return `twainmq consumer ${this.memberId} of group "${this.group}"`
  }

  /**
   * A fatal failure (e.g. a topic that does not exist), reported once: to the 'error' listeners if
   * there are any, else to the iterations under way (each throws it), else as a process warning.
   * Every iteration, also one begun later, throws it; the member closes, and its closing reports
   * nothing more.
   */
  protected fail(e: unknown): void {
    if (this.failure !== undefined) return
    this.failure = e
    this.emitError(e)
    this.failIterations(e)
    void this.close().catch(() => undefined)
  }

  protected override sourceAfterClose(): BatchSource<T> | undefined {
    const f = this.failure
    if (f === undefined) return undefined
    this.failureTaken = true
    return { next: () => Promise.reject(f), close: () => undefined }
  }

  /** Whether a fatal failure ended the member. */
  protected get failed(): boolean {
    return this.failure !== undefined
  }

  /** Leave the group (the mode's shutdown runs once). Idempotent. */
  override close(): Promise<void> {
    this.unlistenSignal()
    this.closing ??= this.shutdown()
    return this.closing
  }

  /** End every iteration quietly (the stream part of closing; shutdowns call it). */
  protected endIterations(): Promise<void> {
    return super.close()
  }

  /** The mode's way of leaving: stop reading, drain, flush, leave. */
  protected abstract shutdown(): Promise<void>

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close()
  }
}
