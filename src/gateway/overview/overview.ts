import type { Backend } from '../../backends/backend.js'
import { GroupNotFoundError, TopicNotFoundError } from '../../core/errors.js'
import { describeGroup } from '../../facade/group-commands.js'
import { streamPathOf } from '../stream/names.js'

/*
 * The store at a glance, for the gateway's read-only JSON endpoints and the dashboard
 * (docs/gateway.md, "Store overview"): topics with their partitions' streams and offsets, consumer
 * groups with members and committed/end/lag per partition. Offsets are twainmq offsets.
 */

/** One partition of a topic: its Durable Streams stream name and its offsets. */
export interface PartitionOverview {
  partition: number
  /** The stream that serves it: `<topic>` for a single-partition topic, else `<topic>~<p>`. */
  stream: string
  /** First retained offset. */
  start: number
  /** Next offset to be written. */
  end: number
  /** Messages per second written lately (over the gateway's last samples); null before a second sample. */
  rate: number | null
}

export interface TopicOverview {
  topic: string
  partitionCount: number
  /** ms since the epoch. */
  createdAt: number
  partitions: PartitionOverview[]
  /** Sum of the partitions' rates; null before a second sample. */
  rate: number | null
}

export interface GroupPartitionOverview {
  topic: string
  partition: number
  stream: string
  committed: number
  end: number
  lag: number
  /** Age in ms of the oldest message not committed (0 when caught up): `describeGroup`'s `lagMs`. */
  lagMs: number
  /** Shared groups: delivered, unacknowledged entries. */
  pending?: number
}

export interface GroupOverview {
  group: string
  members: Array<{ id: string; name: string; assignments: Array<{ topic: string; partition: number }> }>
  partitions: GroupPartitionOverview[]
  /** Sum of the partitions' lag. */
  lag: number
  /** The largest of the partitions' `lagMs`: how old the oldest message not committed is. */
  lagMs: number
}

/** A snapshot of the store: what `GET /v1/topics`, `GET /v1/groups` and `GET /v1/live` show. */
export interface StoreOverview {
  /** When it was taken, ms since the epoch. */
  at: number
  topics: TopicOverview[]
  groups: GroupOverview[]
}

/** A group's lag over some of its partitions: the sum of their lag, the largest of their `lagMs`. */
export function lagOf(partitions: readonly GroupPartitionOverview[]): { lag: number; lagMs: number } {
  return {
    lag: partitions.reduce((n, r) => n + r.lag, 0),
    lagMs: partitions.reduce((n, r) => Math.max(n, r.lagMs), 0),
  }
}

/** The stream serving partition `p` of a topic of `count` partitions. */
export const streamOf = (topic: string, partition: number, count: number): string => {
  const path = streamPathOf(topic) ?? topic // a nested path's topic (events+eu) is read as events/eu
  return count === 1 ? path : `${path}~${partition}`
}

/** Read the store's topics and groups now (rates null: the stats hub fills them in). */
export async function readOverview(store: Backend): Promise<StoreOverview> {
  const at = Date.now()
  const topics: TopicOverview[] = []
  const counts = new Map<string, number>()
  for (const name of await store.listTopics()) {
    try {
      const [meta, offsets] = await Promise.all([store.getTopic(name), store.offsets(name)])
      counts.set(name, meta.partitions)
      const partitions = offsets.map((o) => ({
        partition: o.partition,
        stream: streamOf(name, o.partition, meta.partitions),
        start: o.start,
        end: o.end,
        rate: null,
      }))
      topics.push({ topic: name, partitionCount: meta.partitions, createdAt: meta.createdAt, partitions, rate: null })
    } catch (e) {
      if (!(e instanceof TopicNotFoundError)) throw e // deleted meanwhile
    }
  }
  const groups: GroupOverview[] = []
  for (const name of await store.admin.listGroups()) {
    let d
    try {
      d = await describeGroup(store, name)
    } catch (e) {
      if (e instanceof GroupNotFoundError) continue
      throw e
    }
    const partitions = d.topics.map((r) => ({ ...r, stream: streamOf(r.topic, r.partition, counts.get(r.topic) ?? 1) }))
    const members = d.members.map((m) => ({
      id: m.id,
      name: m.name,
      assignments: m.assignments.map((a) => ({ topic: a.topic, partition: a.partition })),
    }))
    groups.push({ group: d.group, members, partitions, ...lagOf(partitions) })
  }
  return { at, topics, groups }
}
