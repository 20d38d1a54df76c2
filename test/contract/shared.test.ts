/**
 * Backend contract, shared groups (`Backend.shared`, an optional capability): delivery, competing
 * members, acknowledgements, claims of idle entries, re-deliveries and give-backs with their
 * delivery counts, and the admin calls (`Backend.admin`) on a shared group. Implementations without
 * the capability must leave `shared` undefined.
 */
import { describe, expect, it } from 'vitest'
import type { Backend } from '../../src/backends/backend.js'
import { HOST } from '../../src/backends/liveness.js'
import type {
  EntryRef,
  SharedDelivery,
  SharedMember,
  SharedMemberEvents,
  SharedMemberOptions,
  SharedGroups,
} from '../../src/backends/shared.js'
import { InvalidArgumentError } from '../../src/core/errors.js'
import { texts, topicMeta } from './fixture.js'
import { kinds, perTest } from './kinds.js'
import { partitionKey } from '../../src/core/partition-key.js'

/** What a member reported through its events. */
class Reports implements SharedMemberEvents {
  readonly lostEntries: EntryRef[] = []
  readonly trimmedEntries: EntryRef[] = []
  readonly commits: EntryRef[] = []
  readonly errors: Error[] = []
  lost = (e: EntryRef[]) => void this.lostEntries.push(...e)
  trimmed = (e: EntryRef[]) => void this.trimmedEntries.push(...e)
  committed = (e: EntryRef[]) => void this.commits.push(...e)
  error = (e: Error) => void this.errors.push(e)
  readonly fencings: Error[] = []
  fenced = (e: Error) => void this.fencings.push(e)
  rolledBack = (e: Error) => void this.errors.push(e)
}

const ref = (d: SharedDelivery): EntryRef => ({
  topic: d.message.topic,
  partition: d.message.partition,
  offset: d.message.offset,
})
const label = (d: SharedDelivery) => `${d.message.partition}@${d.message.offset}`
const sorted = (ds: readonly SharedDelivery[]) => ds.map(label).sort()

/** Fetch until `n` deliveries came (each fetch bounded by 1 s, all by `ms`). */
async function fetchN(m: SharedMember, n: number, ms = 10_000): Promise<SharedDelivery[]> {
  const out: SharedDelivery[] = []
  const deadline = Date.now() + ms
  while (out.length < n) {
    if (Date.now() > deadline)
      throw new Error(`member ${m.name} got ${out.length} of ${n} entries within ${ms} ms: ${sorted(out).join(' ')}`)
    out.push(...(await m.fetch(n - out.length, AbortSignal.timeout(1000))))
  }
  return out
}

describe.each(kinds())('$name: shared groups', (kind) => {
  kind.hooks()
  const ctx = perTest(kind)

  if (!kind.caps.shared) {
    it('has no shared-group capability: `shared` is undefined', async () => {
      const b = await ctx.fresh()
      expect(b.shared).toBeUndefined()
    })
    return
  }

  /** A topic `t` of 2 partitions: 6 entries on 0, 4 on 1 (values `p<partition>.<i>`). */
  async function setUp(): Promise<{
    b: Backend
    shared: SharedGroups
    join(name: string, o?: Partial<SharedMemberOptions>, on?: Backend): Promise<[SharedMember, Reports]>
  }> {
    const b = await ctx.fresh()
    const shared = b.shared as SharedGroups
    expect(shared).toBeDefined()
    const meta = topicMeta('t', { partitions: 2 })
    await b.createTopic(meta)
    await b.append('t', 0, texts(meta, 'p0.', 6), 'p')
    await b.append('t', 1, texts(meta, 'p1.', 4), 'p')
    const join = async (
      name: string,
      o: Partial<SharedMemberOptions> = {},
      on = b,
    ): Promise<[SharedMember, Reports]> => {
      const reports = new Reports()
      const options = {
        group: 'g',
        name,
        topics: ['t'],
        from: 'start' as const,
        claimAfterMs: 60_000,
        ackIntervalMs: 50,
        sessionTimeoutMs: 30_000,
        heartbeatIntervalMs: 1000,
        ...o,
      }
      return [await (on.shared as SharedGroups).join(options, reports), reports]
    }
    return { b, shared, join }
  }

  it('a member gets every entry once, deliveryCount 1, in offset order per partition', async () => {
    const { join } = await setUp()
    const [a, reports] = await join('a')
    expect(a.name).toBe('a')
    expect(a.partitions).toEqual([
      { topic: 't', partition: 0 },
      { topic: 't', partition: 1 },
    ])
    const got = await fetchN(a, 10)
    expect(got).toHaveLength(10)
    for (const d of got) {
      expect(d.deliveryCount).toBe(1)
      expect(d.message.value).toBe(`p${d.message.partition}.${d.message.offset}`)
    }
    for (const p of [0, 1]) {
      const offsets = got.filter((d) => d.message.partition === p).map((d) => d.message.offset)
      expect(offsets).toEqual([...offsets].sort((x, y) => x - y))
    }
    expect(await a.fetch(10, AbortSignal.timeout(300))).toEqual([]) // nothing more, and never an entry twice
    expect(reports.errors).toEqual([])
    await a.leave()
  })

  it('two members compete: every entry goes to exactly one of them', async () => {
    const { join } = await setUp()
    const [a] = await join('a')
    const [b] = await join('b')
    const got: { a: SharedDelivery[]; b: SharedDelivery[] } = { a: [], b: [] }
    const deadline = Date.now() + 10_000
    while (got.a.length + got.b.length < 10 && Date.now() < deadline) {
      const [fa, fb] = await Promise.all([a.fetch(3, AbortSignal.timeout(300)), b.fetch(3, AbortSignal.timeout(300))])
      got.a.push(...fa)
      got.b.push(...fb)
    }
    const all = [...sorted(got.a), ...sorted(got.b)]
    expect(all).toHaveLength(10)
    expect(new Set(all).size).toBe(10)
    await Promise.all([a.leave(), b.leave()])
  })

  it('ack + flush: entries leave the pending list and the committed offsets are reported and stored', async () => {
    const { b, join } = await setUp()
    const [a, reports] = await join('a')
    const got = await fetchN(a, 10)
    const before = await b.admin.describeGroup('g')
    expect([before?.pending.get(partitionKey('t', 0)), before?.pending.get(partitionKey('t', 1))]).toEqual([6, 4])
    expect(before?.members.find((m) => m.id === 'a')?.assignments).toEqual(a.partitions)
    for (const d of got) a.ack(ref(d))
    await a.flush()
    const after = await b.admin.describeGroup('g')
    expect([after?.pending.get(partitionKey('t', 0)), after?.pending.get(partitionKey('t', 1))]).toEqual([0, 0])
    const last = new Map(reports.commits.map((c) => [c.partition, c.offset]))
    expect([last.get(0), last.get(1)]).toEqual([6, 4])
    expect([after?.commits.get(partitionKey('t', 0)), after?.commits.get(partitionKey('t', 1))]).toEqual([6, 4])
    await a.leave()
  })

  it("a dead member's entries (its instance closed without leaving) are claimed after claimAfterMs, deliveryCount 2", async () => {
    const { b: store, join } = await setUp()
    const doomed = await ctx.open()
    const [a] = await join('a', { claimAfterMs: 400 }, doomed)
    const held = await fetchN(a, 10)
    const t0 = Date.now()
    await doomed.close() // the member stops refreshing, as if its process died
    const [b] = await join('b', { claimAfterMs: 400 })
    const claimed = await fetchN(b, 10)
    expect(Date.now() - t0).toBeGreaterThanOrEqual(300)
    expect(sorted(claimed)).toEqual(sorted(held))
    for (const d of claimed) expect(d.deliveryCount).toBe(2)
    for (const d of claimed) b.ack(ref(d))
    await b.flush()
    const desc = await store.admin.describeGroup('g')
    expect([desc?.pending.get(partitionKey('t', 0)), desc?.pending.get(partitionKey('t', 1))]).toEqual([0, 0])
    await b.leave()
  })

  it('entries a member held when it left stay pending and go to another member, deliveryCount 2', async () => {
    const { join } = await setUp()
    const [a] = await join('a')
    const held = await fetchN(a, 10)
    await a.leave()
    const [b] = await join('b', { claimAfterMs: 300 })
    const taken = await fetchN(b, 10)
    expect(sorted(taken)).toEqual(sorted(held))
    for (const d of taken) expect(d.deliveryCount).toBe(2)
    await b.leave()
  })

  it('redeliver counts the delivery; giveBack hands entries to another member (counted only when delivered)', async () => {
    const { join } = await setUp()
    const [a] = await join('a')
    const got = await fetchN(a, 10)
    const [d0, d1, d2] = got.filter((d) => d.message.partition === 0) as [
      SharedDelivery,
      SharedDelivery,
      SharedDelivery,
    ]
    const again = await a.redeliver([ref(d0)])
    expect(again.map((d) => [label(d), d.deliveryCount, d.message.value])).toEqual([[label(d0), 2, d0.message.value]])
    await a.giveBack([ref(d1)], true)
    await a.giveBack([ref(d2)], false)
    const [b] = await join('b', { claimAfterMs: 100 })
    const taken = await fetchN(b, 2)
    expect(taken.map((d) => [label(d), d.deliveryCount]).sort()).toEqual([
      [label(d1), 2],
      [label(d2), 1],
    ])
    await Promise.all([a.leave(), b.leave()])
  })

  it('resetGroup moves the read position; deleteGroup removes the group; describeGroup of none is undefined', async () => {
    const { b, join } = await setUp()
    expect(await b.admin.describeGroup('g')).toBeUndefined()
    const [a] = await join('a')
    for (const d of await fetchN(a, 10)) a.ack(ref(d))
    await a.leave()
    await b.admin.resetGroup('g', 't', new Map([[0, 3]]))
    const [c] = await join('c')
    const again = await fetchN(c, 3)
    expect(sorted(again)).toEqual(['0@3', '0@4', '0@5'])
    for (const d of again) c.ack(ref(d))
    await c.leave()
    await b.admin.deleteGroup('g')
    expect(await b.admin.describeGroup('g')).toBeUndefined()
  })

  it('a group with live partitioned members cannot be joined as a shared group', async () => {
    const { b, shared } = await setUp()
    await b.groups.groupHeartbeat(
      'pg',
      { id: 'm', name: 'm', topics: ['t'], sessionTimeoutMs: 30_000, pid: process.pid, host: HOST },
      [],
    )
    const options = {
      group: 'pg',
      name: 's',
      topics: ['t'],
      from: 'start' as const,
      claimAfterMs: 1000,
      ackIntervalMs: 50,
      sessionTimeoutMs: 30_000,
      heartbeatIntervalMs: 1000,
    }
    await expect(shared.join(options, new Reports())).rejects.toBeInstanceOf(InvalidArgumentError)
  })
})
