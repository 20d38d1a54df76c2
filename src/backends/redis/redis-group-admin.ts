import { checkGroupName } from '../../core/names.js'
import type { GroupAdmin, GroupSnapshot } from '../group-admin.js'
import type { RedisGroupStore } from './group-store.js'
import type { RedisSharedGroups } from './shared/shared-group.js'

/**
 * Group administration on Redis, for both modes: a group's members, leases and `committed` offsets
 * live in the partitioned group store (shared members register there too, and shared groups write
 * their `committed` offsets there), and a shared group also has a Redis consumer group on each
 * partition stream (its read position and pending entries). Each call runs the partitioned part
 * first, so its checks (the group exists, no live member) refuse before the streams are touched.
 */
export class RedisGroupAdmin implements GroupAdmin {
  constructor(
    private readonly groups: RedisGroupStore,
    private readonly shared: RedisSharedGroups,
  ) {}

  listGroups(): Promise<string[]> {
    return this.groups.listGroups()
  }

  async describeGroup(group: string): Promise<GroupSnapshot | undefined> {
    const snap = await this.groups.describeGroup(checkGroupName(group))
    if (!snap) return undefined
    // A shared group: pending entries per partition, and members that read every partition of their topics.
    const shared = await this.shared.describeGroup(snap.group, snap.topics)
    const members = snap.members.map((m) => ({
      id: m.id,
      name: m.name,
      assignments: shared?.members.get(m.id) ?? m.assignments,
      ...(m.processor === true ? { processor: true as const } : {}),
    }))
    return { ...snap, members, pending: shared?.pending ?? new Map() }
  }

  async resetGroup(group: string, topic: string, offsets: ReadonlyMap<number, number>): Promise<void> {
    await this.groups.resetGroup(group, topic, offsets)
    await this.shared.resetGroup(group, topic, offsets)
  }

  async deleteGroup(group: string): Promise<void> {
    const topics = await this.groups.deleteGroup(group)
    await this.shared.deleteGroup(group, topics)
  }

  topicCommits(topic: string): Promise<Array<Map<number, number>>> {
    return this.groups.topicCommits(topic)
  }
}
