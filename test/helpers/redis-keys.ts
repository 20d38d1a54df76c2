// Where a twainmq instance keeps a partition on Redis, for tests that inspect keys: on a Cluster a
// topic's partitions carry the hash tags chosen at creation (placement.ts), so tests ask the
// instance instead of spelling `{<topic>:<partition>}`.
import type { RedisBackend } from '../../src/backends/redis/redis-backend.js'
import type { Twain } from '../../src/index.js'
import { backendOf } from '../../src/facade/twain.js'

const redisOf = (t: Twain): RedisBackend => backendOf(t) as RedisBackend

/** The stream key of a partition, as `twain` names it (its topic's meta read, e.g. by `describeTopic`). */
export async function streamKeyOf(twain: Twain, topic: string, partition: number): Promise<string> {
  await twain.describeTopic(topic)
  return redisOf(twain).keys.stream(topic, partition)
}
