import type { BatchIterator } from '../stream/batch-iterator.js'
import { MessageStream } from '../stream/message-stream.js'
import { ConsumerEvents, type ConsumerEventMap } from './events.js'

/**
 * What every consumer-group member shares, whatever its mode: it is a `MessageStream` (each
 * iteration a view of the membership), has typed events, a fatal-failure path, and an idempotent
 * `close()` that runs the mode's own shutdown once.
 */
export abstract class MemberStream<T> extends MessageStream<T> implements AsyncDisposable {
  protected readonly events = new ConsumerEvents()
  protected state: 'running' | 'closing' | 'closed' = 'running'
  protected failure: unknown
  private closing: Promise<void> | undefined

  constructor(signal: AbortSignal | undefined, registry: Set<BatchIterator<unknown>>) {
    super(undefined, signal, registry)
  }

  on<E extends keyof ConsumerEventMap>(event: E, listener: (payload: ConsumerEventMap[E]) => void): () => void {
    return this.events.on(event, listener)
  }

  protected emitError(e: unknown): void {
    if (this.state === 'closed') return
    this.events.emit('error', e instanceof Error ? e : new Error(String(e)))
  }

  /** A fatal failure (e.g. a topic that does not exist): every iteration throws it, 'error' reports it, the member closes. */
  protected fail(e: unknown): void {
    this.failure = e
    this.emitError(e)
    this.failIterations(e)
    void this.close().catch(() => undefined)
  }

  /** Leave the group (the mode's shutdown runs once). Idempotent. */
  override close(): Promise<void> {
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
