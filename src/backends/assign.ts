import { partitionKey } from '../core/partition-key.js'
/** A partition of a topic, as `"<topic>/<partition>"` keys are awkward to pass around. */
export interface TopicPartition {
  topic: string
  partition: number
}

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
 * @param owners current owner of each partition key (`partitionKey`), if any
 * @returns member id for each partition key (partitions no member subscribes to are absent)
 */
export function assignPartitions(
  partitions: readonly TopicPartition[],
  members: readonly AssignMember[],
  owners: ReadonlyMap<string, string>,
): Map<string, string> {
  const result = new Map<string, string>()
  if (members.length === 0) return result
  const items = [...partitions].sort((a, b) =>
    a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition,
  )
  const subs = new Map(members.map((m) => [m.id, new Set(m.topics)]))
  const eligible = (tp: TopicPartition) => members.filter((m) => subs.get(m.id)?.has(tp.topic)).map((m) => m.id)
  const assignable = items.filter((tp) => eligible(tp).length > 0)

  // Quotas: floor(P/M) each; the `P % M` larger quotas go to members that own most now (stickiness), then by id.
  const owned = new Map<string, number>(members.map((m) => [m.id, 0]))
  for (const tp of assignable) {
    const o = owners.get(partitionKey(tp.topic, tp.partition))
    if (o !== undefined && owned.has(o) && subs.get(o)?.has(tp.topic)) owned.set(o, (owned.get(o) as number) + 1)
  }
  const order = [...members]
    .map((m) => m.id)
    .sort((a, b) => (owned.get(b) as number) - (owned.get(a) as number) || (a < b ? -1 : a > b ? 1 : 0))
  const base = Math.floor(assignable.length / members.length)
  const extra = assignable.length % members.length
  const quota = new Map(order.map((id, i) => [id, base + (i < extra ? 1 : 0)]))
  const count = new Map<string, number>(members.map((m) => [m.id, 0]))

  // Pass 1: keep current owners within quota.
  const rest: TopicPartition[] = []
  for (const tp of assignable) {
    const key = partitionKey(tp.topic, tp.partition)
    const o = owners.get(key)
    if (
      o !== undefined &&
      quota.has(o) &&
      subs.get(o)?.has(tp.topic) &&
      (count.get(o) as number) < (quota.get(o) as number)
    ) {
      result.set(key, o)
      count.set(o, (count.get(o) as number) + 1)
    } else rest.push(tp)
  }
  // Pass 2: the rest to the eligible member furthest below its quota (then fewest, then id),
  // most constrained partitions (fewest eligible members) first so they cannot be crowded out.
  const eligibleCount = new Map(rest.map((tp) => [tp, eligible(tp).length]))
  const ordered = rest
    .map((tp, i) => ({ tp, i }))
    .sort((a, b) => (eligibleCount.get(a.tp) as number) - (eligibleCount.get(b.tp) as number) || a.i - b.i)
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
      result.set(partitionKey(tp.topic, tp.partition), best)
      count.set(best, (count.get(best) as number) + 1)
    }
  }
  rebalance(assignable, members, subs, result, count, owners)
  return result
}

/**
 * Greedy passes can strand a member with few eligible partitions (mixed subscriptions). Fix that
 * with augmenting chains: find the least-loaded member, and a chain of members each giving one
 * partition to the previous, ending at a member with at least two more. Every chain makes the
 * spread strictly tighter, so this ends, with counts differing by ≤ 1 wherever that is possible.
 */
function rebalance(
  items: readonly TopicPartition[],
  members: readonly AssignMember[],
  subs: ReadonlyMap<string, ReadonlySet<string>>,
  result: Map<string, string>,
  count: Map<string, number>,
  owners: ReadonlyMap<string, string>,
): void {
  const ids = members.map((m) => m.id).sort()
  for (let guard = 0; guard < items.length * members.length + 1; guard++) {
    // A chain needs a member with at least two more than another: none when the spread is ≤ 1 (the
    // usual case), and the search below costs O(members² × partitions) to find that out.
    let lo = Infinity
    let hi = -Infinity
    for (const id of ids) {
      const c = count.get(id) as number
      lo = Math.min(lo, c)
      hi = Math.max(hi, c)
    }
    if (hi - lo <= 1) return
    let improved = false
    for (const lo of [...ids].sort((a, b) => (count.get(a) as number) - (count.get(b) as number) || (a < b ? -1 : 1))) {
      const chain = findChain(lo, items, ids, subs, result, count, owners)
      if (!chain) continue
      for (const { key, to } of chain) {
        const from = result.get(key) as string
        result.set(key, to)
        count.set(from, (count.get(from) as number) - 1)
        count.set(to, (count.get(to) as number) + 1)
      }
      improved = true
      break
    }
    if (!improved) return
  }
}

/** Breadth-first search for moves that give `lo` one more partition and some member with ≥ lo + 2 one less. */
function findChain(
  lo: string,
  items: readonly TopicPartition[],
  ids: readonly string[],
  subs: ReadonlyMap<string, ReadonlySet<string>>,
  result: ReadonlyMap<string, string>,
  count: ReadonlyMap<string, number>,
  owners: ReadonlyMap<string, string>,
): Array<{ key: string; to: string }> | undefined {
  const target = (count.get(lo) as number) + 2
  const via = new Map<string, { key: string; to: string }>() // member → the move that reached it
  const seen = new Set([lo])
  let frontier = [lo]
  while (frontier.length) {
    const next: string[] = []
    for (const taker of frontier) {
      // Partitions the taker may have, preferring ones it owns now (stickiness), then by order.
      const candidates = items
        .filter((tp) => subs.get(taker)?.has(tp.topic))
        .map((tp) => partitionKey(tp.topic, tp.partition))
        .sort((a, b) => Number(owners.get(b) === taker) - Number(owners.get(a) === taker))
      for (const key of candidates) {
        const giver = result.get(key)
        if (giver === undefined || seen.has(giver)) continue
        seen.add(giver)
        via.set(giver, { key, to: taker })
        if ((count.get(giver) as number) >= target) {
          const chain: Array<{ key: string; to: string }> = []
          for (let m = giver; m !== lo;) {
            const step = via.get(m) as { key: string; to: string }
            chain.push(step)
            m = step.to
          }
          return chain
        }
        next.push(giver)
      }
    }
    frontier = next.sort((a, b) => ids.indexOf(a) - ids.indexOf(b))
  }
  return undefined
}
