import type { Backend } from '../../backends/backend.js'
import { recordInput } from '../../backends/record.js'
import { TopicExistsError } from '../../core/errors.js'
import { keyCodec } from '../../core/keys.js'
import { ValueKind } from '../../core/values.js'
import type { SubscriptionConfig } from './definition.js'

/** The internal topic that keeps the gateway's subscriptions (compacted, keyed by subscription id). */
export const SUBSCRIPTIONS_TOPIC = '__ds_subscriptions'

/** A stream a subscription follows, and how far its consumer acknowledged it. */
export interface StoredLink {
  path: string
  explicit: boolean
  glob: boolean
  /** A `Stream-Next-Offset` token, or `-1` (nothing acknowledged: from the stream's start). */
  acked: string
}

/** What survives a restart of the gateway: the definition, the streams with their acks, the generation. */
export interface StoredSubscription {
  id: string
  config: SubscriptionConfig
  createdAt: string
  /** The gateway's origin as the creator reached it: its callback and key-set URLs start with it. */
  origin: string
  generation: number
  links: StoredLink[]
}

const KEYS = keyCodec('string')

/**
 * Subscriptions in the store, not in the gateway's memory: each change appends the subscription's
 * whole state as a record keyed by its id to a compacted internal topic (a delete appends a
 * tombstone), so the latest record of each id is its state, compaction keeps the topic small, and
 * a gateway started over the same store (file or Redis) serves the same subscriptions from where
 * their consumers left them.
 */
export class SubscriptionLog {
  private ready: Promise<void> | undefined

  constructor(
    private readonly store: Backend,
    private readonly producerId: string,
  ) {}

  /** Every subscription stored, each in its latest state. */
  async load(): Promise<StoredSubscription[]> {
    await this.ensure()
    const latest = new Map<string, StoredSubscription | null>()
    const reader = await this.store.openReader(SUBSCRIPTIONS_TOPIC, 0, 0)
    try {
      for (;;) {
        const got = await reader.read(1000)
        if (got.length === 0) break
        for (const m of got) latest.set(String(m.key), (m.value as StoredSubscription | null) ?? null)
      }
    } finally {
      await reader.close()
    }
    return [...latest.values()].filter((s): s is StoredSubscription => s !== null)
  }

  /** Store `s` as its latest state. */
  async save(s: StoredSubscription): Promise<void> {
    await this.append(s.id, JSON.stringify(s))
  }

  /** Store that subscription `id` is deleted. */
  async remove(id: string): Promise<void> {
    await this.append(id, 'null')
  }

  private async append(id: string, json: string): Promise<void> {
    await this.ensure()
    await this.store.append(SUBSCRIPTIONS_TOPIC, 0, [recordInput(KEYS, id, ValueKind.Json, json)], this.producerId)
  }

  private ensure(): Promise<void> {
    this.ready ??= this.store
      .createTopic({
        name: SUBSCRIPTIONS_TOPIC,
        partitions: 1,
        keyType: 'string',
        messageTypes: [],
        retention: {},
        maxMessageBytes: 1024 * 1024,
        createdAt: Date.now(),
        compact: true,
      })
      .catch((e: unknown) => {
        if (!(e instanceof TopicExistsError)) {
          this.ready = undefined
          throw e
        }
      })
    return this.ready
  }
}
