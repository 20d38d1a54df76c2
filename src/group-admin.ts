import type { Backend } from './backends/backend.js'
import { GroupNotFoundError, InvalidArgumentError, TopicNotFoundError } from './core/errors.js'
import { checkGroupName, checkInt, checkTopicName } from './core/names.js'
import { partitionKey } from './core/partition-key.js'
import type { GroupDescription } from './twain-options.js'

/*
 * Consumer-group administration for the facade: each backend answers for partitioned groups
 * (`groups`) and, where it has them, shared groups (`shared`); these compose the two.
 */

/** Members, assignments and committed/end/lag of every partition a group consumes. */
export async function describeGroup(store: Backend, group: string): Promise<GroupDescription> {
  const snap = await store.groups.describeGroup(checkGroupName(group))
  if (!snap) throw new GroupNotFoundError(`Group "${group}" does not exist`)
  // A shared group (Redis): pending entries per partition, and members that read every partition.
  const shared = await store.shared?.describeGroup(snap.group, snap.topics)
  const topics: GroupDescription['topics'] = []
  for (const topic of [...snap.topics].sort()) {
    let offsets
    try {
      offsets = await store.offsets(topic)
    } catch (e) {
      if (e instanceof TopicNotFoundError) continue
      throw e
    }
    for (const o of offsets) {
      const committed = Math.max(snap.commits.get(partitionKey(topic, o.partition)) ?? o.start, o.start)
      const row: GroupDescription['topics'][number] = { topic, partition: o.partition, committed, end: o.end, lag: Math.max(0, o.end - committed) }
      const pending = shared?.pending.get(partitionKey(topic, o.partition))
      if (pending !== undefined) row.pending = pending
      topics.push(row)
    }
  }
  return { group: snap.group, members: snap.members.map((m) => ({ id: m.id, name: m.name, assignments: shared?.members.get(m.id) ?? m.assignments })), topics }
}

/** Set a group's committed offsets of a topic: to its start, its end, or given offsets per partition. */
export async function resetGroup(store: Backend, group: string, topic: string, to: 'start' | 'end' | Record<number, number>): Promise<void> {
  checkGroupName(group)
  const offsets = await store.offsets(checkTopicName(topic))
  const target = new Map<number, number>()
  if (to === 'start' || to === 'end') for (const o of offsets) target.set(o.partition, to === 'start' ? o.start : o.end)
  else if (to && typeof to === 'object') {
    const byPartition = new Map(offsets.map((o) => [o.partition, o])) // not a find per entry: O(P²) over a wide topic
    for (const [p, off] of Object.entries(to)) {
      const o = byPartition.get(Number(p))
      if (!o) throw new InvalidArgumentError(`Partition ${p} does not exist in topic "${topic}"`)
      target.set(o.partition, checkInt(`offset of partition ${p}`, off, 0, Number.MAX_SAFE_INTEGER))
    }
  } else throw new InvalidArgumentError(`resetGroup() takes 'start', 'end' or { partition: offset }, got ${JSON.stringify(to)}`)
  await store.groups.resetGroup(group, topic, target)
  await store.shared?.resetGroup(group, topic, target)
}

/** Delete a consumer group (it must have no live members). */
export async function deleteGroup(store: Backend, group: string): Promise<void> {
  const topics = store.shared ? ((await store.groups.describeGroup(checkGroupName(group)))?.topics ?? []) : []
  await store.groups.deleteGroup(checkGroupName(group))
  await store.shared?.deleteGroup(group, topics)
}
