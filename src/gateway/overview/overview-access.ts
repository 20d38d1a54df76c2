import type { GatewayContext } from '../config/context.js'
import { refused } from '../auth/access.js'
import type { GwRequest } from '../transport/http.js'
import { lagOf, type GroupOverview, type StoreOverview, type TopicOverview } from './overview.js'

/*
 * What one request may see of the store overview: with `auth` (and/or an `authorize` hook) a
 * partition shows only if its stream may be read, a topic only with at least one such partition,
 * a group only with such partitions (its other partitions and assignments hidden). Answers are
 * cached per stream name for the life of the request (a live view re-filters every snapshot).
 */

export interface OverviewFilter {
  apply(o: StoreOverview): Promise<StoreOverview>
}

/** 401/403 as for streams: a missing or unknown token, or one that may read no stream at all. */
export function checkOverviewAccess(ctx: GatewayContext, req: GwRequest): void {
  const { auth } = ctx.options
  if (!auth) return
  const d = auth.checkAny(req.header('authorization'), 'read')
  if (!d.allowed) throw refused(d)
  req.principal = d.principal
}

/** The filter for a request that passed {@link checkOverviewAccess}. */
export function overviewFilter(ctx: GatewayContext, req: GwRequest): OverviewFilter {
  const { auth, authorize } = ctx.options
  if (!auth && !authorize) return { apply: (o) => Promise.resolve(o) }
  const known = new Map<string, boolean | Promise<boolean>>()
  const authorization = req.header('authorization')
  const decide = async (stream: string): Promise<boolean> => {
    if (auth && !auth.check(authorization, stream, 'read').allowed) return false
    return authorize ? (await authorize(req, stream, 'read')) === true : true
  }
  const mayRead = (stream: string): boolean | Promise<boolean> => {
    let v = known.get(stream)
    if (v === undefined) {
      const p = decide(stream).then((ok) => (known.set(stream, ok), ok))
      known.set(stream, p)
      v = p
    }
    return v
  }
  return {
    async apply(o) {
      const topics: TopicOverview[] = []
      const readable = new Set<string>()
      for (const t of o.topics) {
        const partitions = []
        for (const p of t.partitions) if (await mayRead(p.stream)) partitions.push(p)
        if (partitions.length === 0) continue
        for (const p of partitions) readable.add(p.stream)
        const rates = partitions.map((p) => p.rate)
        const rate = rates.some((r) => r === null) ? null : (rates as number[]).reduce((a, b) => a + b, 0)
        topics.push({ ...t, partitions, rate })
      }
      const groups: GroupOverview[] = []
      for (const g of o.groups) {
        const partitions = g.partitions.filter((p) => readable.has(p.stream))
        if (partitions.length === 0) continue
        const topicsSeen = new Set(partitions.map((p) => `${p.topic}\0${p.partition}`))
        const members = g.members.map((m) => ({
          ...m,
          assignments: m.assignments.filter((a) => topicsSeen.has(`${a.topic}\0${a.partition}`)),
        }))
        groups.push({ ...g, members, partitions, ...lagOf(partitions) })
      }
      return { at: o.at, topics, groups }
    },
  }
}
