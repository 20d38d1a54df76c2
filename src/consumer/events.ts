import type { TopicPartition } from '../backends/assign.js'

/** Events of a consumer and their payloads. */
export interface ConsumerEventMap {
  /** Partitions this member now owns. */
  assigned: TopicPartition[]
  /** Partitions this member gave up or lost. */
  revoked: TopicPartition[]
  /** Offsets committed (next offset to consume per partition). */
  commit: Array<TopicPartition & { offset: number }>
  /** A background failure (heartbeat, commit, dead-letter write). Without listeners it is dropped. */
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
