import type { TopicStore } from '../../backends/backend.js'
import type { RecordInput } from '../../backends/record.js'
import { perStore } from './per-store.js'
import type { Compaction } from './state-records.js'
import { CONFIG_TYPE, controlRecord } from './records.js'

/** A run of another stream's data that a fork inherits: `[start, limit)` of a partition. */
export interface Segment {
  topic: string
  partition: number
  /** Incarnation of that topic (the first half of its offset tokens). */
  incarnation: number
  start: number
  /** Exclusive end; absent for a stream's own (growing) segment. */
  limit?: number
}

/** The immutable configuration of a gateway-created stream. */
export interface StreamConfig {
  /** The content type as created (served back as is). */
  contentType: string
  ttlSeconds?: number
  /** `Stream-Expires-At` as given, and its time in ms. */
  expiresAt?: string
  expiresAtMs?: number
  /** Created with `Stream-Closed: true`. */
  createdClosed: boolean
  /** Fork: the source's path, the `Stream-Fork-Offset` as given (if given) and the sub-offset. */
  forkedFrom?: string
  forkOffset?: string
  forkSubOffset?: number
  /** What a fork inherits, oldest first (empty for a plain stream). */
  inherited: Segment[]
  /** Created with `Stream-Compaction` (state-records.ts): the topic is compacted, keyed by it. */
  compaction?: Compaction
}

/**
 * The seam for a stream's configuration: the first record of the topic (offset 0, message type
 * `ds.config`, hidden from HTTP readers), written in the same append as the stream's initial data,
 * so every process over the store reads the same and a stream never exists without it. Topic
 * attributes (`CreateTopicOptions.attributes`) could hold it instead (decision 123); this is the one
 * place that would change.
 */
export function configRecord(config: StreamConfig): RecordInput {
  return controlRecord(CONFIG_TYPE, config)
}

/** First data offset of a gateway topic (after the config record). */
export const FIRST_DATA_OFFSET = 1

const caches = perStore<StreamConfig | null>()

/**
 * The configuration of a topic, or `null` when it was not created by the gateway (a Node topic),
 * or `undefined` while it has no record at all (being created). Cached per topic incarnation.
 */
export async function readConfig(
  store: TopicStore,
  topic: string,
  incarnation: number,
): Promise<StreamConfig | null | undefined> {
  const key = `${topic}@${incarnation}`
  const cache = caches(store)
  const hit = cache.get(key)
  if (hit !== undefined) return hit
  const reader = await store.openReader(topic, 0, 0)
  try {
    const [first] = await reader.read(1)
    if (!first) return undefined
    const config = first.offset === 0 && first.type === CONFIG_TYPE ? (first.value as StreamConfig) : null
    if (cache.size > 10_000) cache.clear()
    cache.set(key, config)
    return config
  } finally {
    await reader.close()
  }
}
