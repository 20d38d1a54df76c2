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
 * same partition count and key type), and create the join topic `topic` like them (an existing
 * one must be like them). Resolves with `topic`.
 */
export async function coPartition(host: JoinHost, left: string, right: string, topic: string): Promise<string> {
  const [l, r] = await Promise.all([host.describeTopic(left), host.describeTopic(right)])
  if (l.partitions !== r.partitions)
    throw new InvalidArgumentError(
      `joinStreams() needs co-partitioned topics: "${left}" has ${l.partitions} partitions, "${right}" has ${r.partitions}; give both the same count, so a key is in the same partition of each`,
    )
  if (l.keyType !== r.keyType)
    throw new InvalidArgumentError(
      `joinStreams() needs co-partitioned topics: "${left}" has key type ${l.keyType}, "${right}" has ${r.keyType}; give both the same key type, so a key is in the same partition of each`,
    )
  await host.ensureTopic(topic, { partitions: l.partitions, keyType: l.keyType })
  return topic
}
