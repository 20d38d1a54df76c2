import type { TopicPartition } from '../backends/assign.js'

/** Events of a consumer and their payloads. */
export interface ConsumerEventMap {
  /** Partitions this member now owns. */
  assigned: TopicPartition[]
  /** Partitions this member gave up or lost. */
  revoked: TopicPartition[]
  /** Offsets committed (next offset to consume per partition). */
  commit: Array<TopicPartition & { offset: number }>
  /**
   * A background failure (heartbeat, commit, dead-letter write, fencing) or a stall (`StalledError`,
   * `ERR_STALLED`: `maxInFlight` messages held unsettled for `stallWarningMs`). Without a listener, the
   * first failure of each code is printed as a process warning (`TwainmqWarning`), like Node's
   * unhandled `'error'`, so none vanishes silently.
   */
  error: Error
}

/** A minimal typed emitter: `on` returns the unsubscribe function; a throwing listener never breaks the consumer. */
export class ConsumerEvents {
  private readonly listeners = new Map<keyof ConsumerEventMap, Set<(p: never) => void>>()

  on<E extends keyof ConsumerEventMap>(event: E, listener: (payload: ConsumerEventMap[E]) => void): () => void {
    let set = this.listeners.get(event)
    if (!set) this.listeners.set(event, (set = new Set()))
    set.add(listener as (p: never) => void)
    return () => void set?.delete(listener as (p: never) => void)
  }

  /** Like `on`, for the next event only; returns a function that removes the listener if it has not run. */
  once<E extends keyof ConsumerEventMap>(event: E, listener: (payload: ConsumerEventMap[E]) => void): () => void {
    const off = this.on(event, (payload) => {
      off()
      listener(payload)
    })
    return off
  }

  /** Whether anything listens for `event`. */
  has(event: keyof ConsumerEventMap): boolean {
    return (this.listeners.get(event)?.size ?? 0) > 0
  }

  emit<E extends keyof ConsumerEventMap>(event: E, payload: ConsumerEventMap[E]): void {
    const set = this.listeners.get(event)
    if (!set) return
    for (const l of [...set]) {
      try {
        ;(l as (p: ConsumerEventMap[E]) => void)(payload)
      } catch {
        /* a listener's failure is its own */
      }
    }
  }

  clear(): void {
    this.listeners.clear()
  }
}
