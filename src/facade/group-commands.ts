import type { Backend } from '../backends/backend.js'
import { GroupNotFoundError, InvalidArgumentError, TopicNotFoundError } from '../core/errors.js'
import { checkTime } from '../core/event-time.js'
import { checkGroupName, checkInt, checkTopicName } from '../core/names.js'
import { partitionKey } from '../core/partition-key.js'
import { checkStateReset, clearState, type ResetOptions } from './state-reset.js'
import type { GroupDescription } from './twain-options.js'

/*
 * Consumer-group administration for the facade: argument checks, reset targets and the public
 * description (committed/end/lag per partition). The backend's `admin` (backends/group-admin.ts)
 * answers for both group modes.
 */

/** Members, assignments and committed/end/lag/lagMs of every partition a group consumes. */
export async function describeGroup(store: Backend, group: string): Promise<GroupDescription> {
  const snap = await store.admin.describeGroup(checkGroupName(group))
  if (!snap) throw new GroupNotFoundError(`Group "${group}" does not exist`)
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
      const key = partitionKey(topic, o.partition)
      const committed = Math.max(snap.commits.get(key) ?? o.start, o.start)
      const row: GroupDescription['topics'][number] = {
        topic,
        partition: o.partition,
        committed,
        end: o.end,
        lag: Math.max(0, o.end - committed),
        lagMs: 0,
      }
      const pending = snap.pending.get(key)
      if (pending !== undefined) row.pending = pending
      topics.push(row)
    }
  }
  await lagAges(store, topics, Date.now())
  return {
    group: snap.group,
    members: snap.members.map((m) => ({
      id: m.id,
      name: m.name,
      kind: m.processor === true ? ('processor' as const) : ('consumer' as const),
      assignments: m.assignments,
    })),
    topics,
  }
}

/** Partitions whose ages are read at once (each opens a reader). */
const AGE_READS = 16

/**
 * Set `lagMs` of each lagging row: `now` minus the timestamp of the first record at or after the
 * committed offset (the oldest not committed; later records are no older on a partition whose
 * sends carry the clock's time), at least 0. A partition trimmed meanwhile keeps 0.
 */
async function lagAges(store: Backend, rows: GroupDescription['topics'], now: number): Promise<void> {
  const lagging = rows.filter((r) => r.lag > 0)
  const one = async (r: GroupDescription['topics'][number]): Promise<void> => {
    let reader
    try {
      reader = await store.openReader(r.topic, r.partition, r.committed)
      const [first] = await reader.readRaw(1)
      if (first !== undefined) r.lagMs = Math.max(0, now - first.timestamp)
    } catch (e) {
      if (!(e instanceof TopicNotFoundError)) throw e
    } finally {
      await reader?.close()
    }
  }
  for (let i = 0; i < lagging.length; i += AGE_READS) await Promise.all(lagging.slice(i, i + AGE_READS).map(one))
}

/** Where `resetGroup` sets a group: the start, the end, offsets per partition, or a time. */
export type ResetTarget = 'start' | 'end' | Record<number, number> | { time: number | Date }

/** Set a group's committed offsets of a topic: to its start, its end, given offsets per partition, or a time. */
export async function resetGroup(
  store: Backend,
  group: string,
  topic: string,
  to: ResetTarget,
  options?: ResetOptions,
): Promise<void> {
  checkGroupName(group)
  const isTime = to !== null && typeof to === 'object' && 'time' in to
  const time = isTime ? checkTime('resetGroup() target time', (to as { time: unknown }).time) : 0
  const offsets = await store.offsets(checkTopicName(topic))
  const target = new Map<number, number>()
  if (to === 'start' || to === 'end') for (const o of offsets) target.set(o.partition, to === 'start' ? o.start : o.end)
  else if (isTime) {
    // The first offset at or after the time, whatever the order of timestamps; past the end: the end.
    const at = await Promise.all(offsets.map((o) => store.offsetForTime(topic, o.partition, time)))
    offsets.forEach((o, i) => target.set(o.partition, Math.min(Math.max(at[i] as number, o.start), o.end)))
  } else if (to && typeof to === 'object') {
    const byPartition = new Map(offsets.map((o) => [o.partition, o])) // not a find per entry: O(P²) over a wide topic
    for (const [p, off] of Object.entries(to)) {
      const o = byPartition.get(Number(p))
      if (!o) throw new InvalidArgumentError(`Partition ${p} does not exist in topic "${topic}"`)
      const at = checkInt(`offset of partition ${p}`, off, 0, Number.MAX_SAFE_INTEGER)
      // Past the end the group would skip what is sent next, without a sign: refused.
      if (at > o.end)
        throw new InvalidArgumentError(
          `Offset ${at} of partition ${p} is past the end of topic "${topic}"'s partition (${o.end}): the group would skip the next ${at - o.end} messages sent to it; use 'end' or an offset ${o.start}..${o.end}`,
        )
      target.set(o.partition, at) // below the start (trimmed): the store sets the start
    }
  } else
    throw new InvalidArgumentError(
      `resetGroup() takes 'start', 'end', { partition: offset } or { time }, got ${JSON.stringify(to)}`,
    )
  // With `state`, the store is cleared too (state-reset.ts): after the positions, so a reset
  // refused (a live member) clears nothing, and one whose clearing failed is run again.
  const changelog = await checkStateReset(
    store,
    group,
    topic,
    offsets.map((o) => o.partition),
    target,
    options,
  )
  await store.admin.resetGroup(group, topic, target)
  await clearState(store, group, changelog)
}

/** Delete a consumer group (it must have no live members). */
export async function deleteGroup(store: Backend, group: string): Promise<void> {
  await store.admin.deleteGroup(checkGroupName(group))
}

/** Names of consumer groups. */
export function listGroups(store: Backend): Promise<string[]> {
  return store.admin.listGroups()
}
