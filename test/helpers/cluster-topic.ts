// Topics for the Cluster fault tests, created so that a failover cannot lose them.
import { open, type CreateTopicOptions } from '../../src/index.js'
import type { RedisCluster } from './redis-cluster.js'
import { until } from './wait.js'

/**
 * Create a topic through a client with `replicaAcks: 1`, so it resolves once replicas hold the
 * topic (decision 220), tried again while the creation fails retriably. A case's setup comes
 * right after the case before restarted a node, whose full sync and AOF rewrite can hold another
 * master past the node timeout: its replica is promoted, and a creation that had reached only
 * the old master was lost with it, failing every later send to its partitions with
 * TopicNotFoundError (also when the test's own client does not wait for replicas).
 */
export async function createReplicated(
  cluster: RedisCluster,
  prefix: string,
  name: string,
  options: CreateTopicOptions,
): Promise<void> {
  const twain = await open(cluster.url, { prefix, replicaAcks: 1 })
  let failed = false
  let fatal: unknown
  try {
    await until(
      async () => {
        try {
          await twain.createTopic(name, options)
          return true
        } catch (e) {
          const err = e as { retriable?: boolean; code?: string }
          // A try before was marked ready on its master and only then not confirmed.
          if (failed && err.code === 'ERR_TOPIC_EXISTS') return true
          if (err.retriable !== true) fatal = e
          failed = true
          return fatal !== undefined
        }
      },
      60_000,
      `topic "${name}" created and held by replicas`,
    )
  } finally {
    await twain.close()
  }
  if (fatal !== undefined) throw fatal
}
