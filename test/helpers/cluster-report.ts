// What a Cluster fault test prints when it fails in a way it cannot explain: each node's role,
// replication state and whether it holds a key, with the end of its log (failovers, syncs,
// state changes), so a failure seen once in CI can be traced afterwards.
import { expect } from 'vitest'
import type { RedisCluster } from './redis-cluster.js'

const REPLICATION =
  /^(role|master_port|master_link_status|master_sync_in_progress|connected_slaves|slave\d+|master_repl_offset):/

/** Every node's state now, and whether it holds `key`; then the last `logChars` of each node's log. */
export async function clusterReport(cluster: RedisCluster, key: string, logChars = 3000): Promise<string> {
  const lines = [`cluster report at ${new Date().toISOString()}, key ${key}:`]
  for (const n of cluster.nodes) {
    try {
      const admin = cluster.admin(n)
      const info = String(await admin.call('INFO', 'replication'))
      const repl = info
        .split('\r\n')
        .filter((l) => REPLICATION.test(l))
        .join(' ')
      const holds = await admin.call('EXISTS', key).then(String, (e: unknown) => String(e))
      lines.push(`node ${n.port} (pid ${n.pid}, running ${n.running}): holds ${holds}; ${repl}`)
    } catch (e) {
      lines.push(`node ${n.port} (pid ${n.pid}, running ${n.running}): ${String(e)}`)
    }
  }
  for (const n of cluster.nodes) lines.push(`--- log of node ${n.port}:`, n.log.slice(-logChars))
  return lines.join('\n')
}

/**
 * Fail the test when a send failed with an error that is not retriable: the first such error, how
 * many, `context` (the run's figures) and the cluster's report (`key`: the partition to look for).
 */
export async function expectRetriable(
  failures: readonly unknown[],
  cluster: RedisCluster,
  key: string,
  context: string,
): Promise<void> {
  const fatal = failures.filter((e) => (e as { retriable?: unknown } | undefined)?.retriable !== true)
  if (fatal.length === 0) return
  expect.fail(
    `${fatal.length} send(s) failed with an error that is not retriable, the first: ${String(fatal[0])} (${context})\n${await clusterReport(cluster, key)}`,
  )
}
