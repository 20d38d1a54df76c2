import type { TopicStore } from './backend.js'
import type { GroupAdmin } from './group-admin.js'

/**
 * `retention: { consumed: true }`, for every backend: trim each partition of `topic` below the
 * lowest committed offset over every group consuming it, of either mode (`GroupAdmin.topicCommits`;
 * a group with no commit on a partition holds all of it). No group at all: nothing is trimmed
 * (nobody has read anything). Resolves with how many messages were removed.
 */
export async function trimConsumed(
  store: Pick<TopicStore, 'trimBefore'>,
  admin: GroupAdmin,
  topic: string,
  partitions: number,
): Promise<number> {
  const groups = await admin.topicCommits(topic)
  if (groups.length === 0) return 0
  let removed = 0
  for (let p = 0; p < partitions; p++) {
    let lowest = Infinity
    for (const commits of groups) lowest = Math.min(lowest, commits.get(p) ?? 0)
    if (lowest > 0) removed += await store.trimBefore(topic, p, lowest)
  }
  return removed
}
