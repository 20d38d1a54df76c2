/** A partition of a topic, as `"<topic>/<partition>"` keys are awkward to pass around. */
export interface TopicPartition {
  topic: string
  partition: number
}

export const tpKey = (topic: string, partition: number): string => `${topic}/${partition}`

/** A member taking part in an assignment. */
export interface AssignMember {
  id: string
  topics: readonly string[]
}

/**
 * Deterministic, sticky, balanced assignment of partitions to members.
 *
 * - Balanced: when every member subscribes to the same topics, partition counts differ by at most 1.
 * - Sticky: a member keeps the partitions it owns now, up to its quota; members that own more get
 *   the larger quotas first, so as few partitions as possible move.
 * - Deterministic: every member computes the same result from the same inputs (ordering by topic,
 *   partition and member id), so the result does not depend on who runs it.
 *
 * @param partitions every partition of the subscribed topics
 * @param members the live members (each only takes partitions of its own topics)
 * @param owners current owner of each partition key (`tpKey`), if any
 * @returns member id for each partition key (partitions no member subscribes to are absent)
 */
export function assignPartitions(
  partitions: readonly TopicPartition[],
  members: readonly AssignMember[],
  owners: ReadonlyMap<string, string>,
): Map<string, string> {
  const result = new Map<string, string>()
  if (members.length === 0) return result
  const items = [...partitions].sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition))
  const subs = new Map(members.map((m) => [m.id, new Set(m.topics)]))
  const eligible = (tp: TopicPartition) => members.filter((m) => subs.get(m.id)?.has(tp.topic)).map((m) => m.id)
  const assignable = items.filter((tp) => eligible(tp).length > 0)

  // Quotas: floor(P/M) each; the `P % M` larger quotas go to members that own most now (stickiness), then by id.
  const owned = new Map<string, number>(members.map((m) => [m.id, 0]))
  for (const tp of assignable) {
    const o = owners.get(tpKey(tp.topic, tp.partition))
    if (o !== undefined && owned.has(o) && subs.get(o)?.has(tp.topic)) owned.set(o, (owned.get(o) as number) + 1)
  }
  const order = [...members].map((m) => m.id).sort((a, b) => (owned.get(b) as number) - (owned.get(a) as number) || (a < b ? -1 : a > b ? 1 : 0))
  const base = Math.floor(assignable.length / members.length)
  const extra = assignable.length % members.length
  const quota = new Map(order.map((id, i) => [id, base + (i < extra ? 1 : 0)]))
  const count = new Map<string, number>(members.map((m) => [m.id, 0]))

  // Pass 1: keep current owners within quota.
  const rest: TopicPartition[] = []
  for (const tp of assignable) {
    const key = tpKey(tp.topic, tp.partition)
    const o = owners.get(key)
    if (o !== undefined && quota.has(o) && subs.get(o)?.has(tp.topic) && (count.get(o) as number) < (quota.get(o) as number)) {
      result.set(key, o)
      count.set(o, (count.get(o) as number) + 1)
    } else rest.push(tp)
  }
  // Pass 2: the rest to the eligible member furthest below its quota (then fewest, then id),
  // most constrained partitions (fewest eligible members) first so they cannot be crowded out.
  const eligibleCount = new Map(rest.map((tp) => [tp, eligible(tp).length]))
  const ordered = rest.map((tp, i) => ({ tp, i })).sort((a, b) => (eligibleCount.get(a.tp) as number) - (eligibleCount.get(b.tp) as number) || a.i - b.i)
  for (const { tp } of ordered) {
    let best: string | undefined
    let bestScore = Infinity
    for (const id of eligible(tp)) {
      const c = count.get(id) as number
      const score = (c < (quota.get(id) as number) ? 0 : 1_000_000) + c
      if (score < bestScore || (score === bestScore && best !== undefined && id < best)) {
        best = id
        bestScore = score
      }
    }
    if (best !== undefined) {
      result.set(tpKey(tp.topic, tp.partition), best)
      count.set(best, (count.get(best) as number) + 1)
    }
  }
  return result
}
