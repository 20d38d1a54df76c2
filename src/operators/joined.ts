import type { Settleable } from './settleable.js'

/**
 * A message with the table's value for its key when it was handed on. Settling it settles the
 * message (so `ack`, `retry`, `batch` and `filterAck` take it).
 */
export class Joined<M extends Settleable, V> implements Settleable {
  constructor(
    /** The message. */
    readonly message: M,
    /** The table's value for the message's key, or undefined. */
    readonly value: V | undefined,
  ) {}

  /** The message's key. */
  get key(): unknown {
    return this.message.key
  }

  ack(): void {
    this.message.ack()
  }

  nack(options?: { delayMs?: number }): void {
    this.message.nack(options)
  }

  term(reason?: string): void {
    this.message.term(reason)
  }

  release(): void {
    this.message.release?.()
  }
}
