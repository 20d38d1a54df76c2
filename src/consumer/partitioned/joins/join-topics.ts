import { InvalidArgumentError } from '../../../core/errors.js'
import type { CreateTopicOptions, Key, TopicInfo } from '../../../core/types.js'
import type { Processor, ProcessorOptions } from '../processor.js'

/** What `joinStreams()` needs of a store's handle (a `Twain`). */
export interface JoinHost {
  describeTopic(name: string): Promise<TopicInfo>
  ensureTopic(name: string, options?: CreateTopicOptions): Promise<TopicInfo>
  processor<V = unknown, K extends Key = Key>(topics: string | string[], options: ProcessorOptions): Processor<V, K>
}

/**
 * Check that `left` and `right` are co-partitioned (a key is in the same partition of both: the
 * same partition count and key type) and that `to` and `lateTo` exist with their key type, and
 * create the join topic `topic` like the inputs, with room for their largest record (an existing
 * one must have their partitions and key type). Resolves with `topic`.
 */
export async function coPartition(
  host: JoinHost,
  o: { left: string; right: string; to: string; lateTo?: string | undefined },
  topic: string,
): Promise<string> {
  const [l, r] = await Promise.all([host.describeTopic(o.left), host.describeTopic(o.right)])
  if (l.partitions !== r.partitions)
    throw new InvalidArgumentError(
      `joinStreams() needs co-partitioned topics: "${o.left}" has ${l.partitions} partitions, "${o.right}" has ${r.partitions}; give both the same count, so a key is in the same partition of each`,
    )
  if (l.keyType !== r.keyType)
    throw new InvalidArgumentError(
      `joinStreams() needs co-partitioned topics: "${o.left}" has key type ${l.keyType}, "${o.right}" has ${r.keyType}; give both the same key type, so a key is in the same partition of each`,
    )
  for (const [option, name] of [
    ['to', o.to],
    ['lateTo', o.lateTo],
  ] as const) {
    if (name === undefined) continue
    const out = await host.describeTopic(name)
    if (out.keyType !== l.keyType)
      throw new InvalidArgumentError(
        `joinStreams() ${option} "${name}" has key type ${out.keyType}, the inputs ${l.keyType}: its records take the inputs' keys`,
      )
  }
  const existing = await host.describeTopic(topic).catch(() => undefined)
  if (existing !== undefined && (existing.partitions !== l.partitions || existing.keyType !== l.keyType))
    throw new InvalidArgumentError(
      `joinStreams() join topic "${topic}" has ${existing.partitions} partitions of key type ${existing.keyType}, the inputs ${l.partitions} of ${l.keyType}: delete it (with no join running) or give the join another group`,
    )
  if (existing === undefined) {
    // A copy adds headers to the input's record: room for them.
    const maxMessageBytes = Math.min(256 * 1024 * 1024, Math.max(l.maxMessageBytes, r.maxMessageBytes) + 4096)
    await host.ensureTopic(topic, { partitions: l.partitions, keyType: l.keyType, maxMessageBytes })
  }
  return topic
}
