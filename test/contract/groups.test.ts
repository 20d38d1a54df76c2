/**
 * Backend contract, partitioned group coordination (`Backend.groups`, a GroupCoordinator):
 * leases with epochs, rebalancing between members of two instances, fenced commits, leave, session
 * expiry and watch; and the partitioned side of the group admin (`Backend.admin`: describe, list,
 * reset, delete; both modes in group-admin.test.ts).
 */
import { describe, expect, it } from 'vitest'
import type { TopicPartition } from '../../src/backends/assign.js'
import type { Backend } from '../../src/backends/backend.js'
import type { Lease, MemberSpec } from '../../src/backends/group.js'
import { HOST } from '../../src/backends/liveness.js'
import { GroupNotFoundError, InvalidArgumentError } from '../../src/core/errors.js'
import { Calls, topicMeta } from './fixture.js'
import { kinds, perTest } from './kinds.js'
import { partitionKey } from '../../src/core/partition-key.js'

const member = (id: string, o: Partial<MemberSpec> = {}): MemberSpec => ({
  id,
  name: `name-${id}`,
  topics: ['t'],
  sessionTimeoutMs: 30_000,
  pid: process.pid,
  host: HOST,
  ...o,
})
const keys = (ls: readonly TopicPartition[]) => ls.map((l) => `${l.topic}/${l.partition}`).sort()
const P = 4
const ALL = Array.from({ length: P }, (_, p) => `t/${p}`)

interface Seat {
  b: Backend
  m: MemberSpec
}

/**
 * Heartbeat every seat in turn, releasing what the previous step revoked, until a whole round asks
 * no member to give anything back and changes no ownership, with `expected` partitions owned (at
 * most 30 rounds).
 */
async function settle(group: string, seats: readonly Seat[], expected = P): Promise<Map<string, Lease[]>> {
  const release = new Map<string, TopicPartition[]>()
  const owned = new Map<string, Lease[]>()
  let last = ''
  for (let round = 0; round < 30; round++) {
    let revoking = false
    for (const { b, m } of seats) {
      const r = await b.groups.groupHeartbeat(group, m, release.get(m.id) ?? [])
      release.set(m.id, r.revoke)
      owned.set(m.id, r.owned)
      revoking ||= r.revoke.length > 0
    }
    const now = JSON.stringify(seats.map(({ m }) => keys(owned.get(m.id) ?? [])))
    const all = [...owned.values()].flatMap(keys)
    if (!revoking && now === last && all.length === expected && new Set(all).size === expected) return owned
    last = now
  }
  throw new Error(`group "${group}" did not settle in 30 rounds: ${JSON.stringify([...owned])}`)
}

const leaseOf = (ls: readonly Lease[], partition: number) => ls.find((l) => l.partition === partition) as Lease

describe.each(kinds())('$name: groups', (kind) => {
  kind.hooks()
  const ctx = perTest(kind)

  async function twoInstances(): Promise<[Backend, Backend]> {
    const b1 = await ctx.fresh({ pollMs: 60_000 })
    const b2 = await ctx.open()
    await b1.createTopic(topicMeta('t', { partitions: P }))
    return [b1, b2]
  }

  it('the only member gets every partition with a positive epoch; renewing keeps the epochs', async () => {
    const [b] = await twoInstances()
    const first = await b.groups.groupHeartbeat('g', member('m1'), [])
    expect(keys(first.owned)).toEqual(ALL)
    expect(first.revoke).toEqual([])
    for (const l of first.owned) {
      expect(Number.isInteger(l.epoch) && l.epoch > 0).toBe(true)
      expect(l.committed).toBeUndefined()
    }
    const again = await b.groups.groupHeartbeat('g', member('m1'), [])
    expect(again.owned.map((l) => [l.partition, l.epoch]).sort()).toEqual(
      first.owned.map((l) => [l.partition, l.epoch]).sort(),
    )
  })

  it('a second member (another instance) joins: after the rebalance steps each owns half, moved leases have new epochs', async () => {
    const [b1, b2] = await twoInstances()
    const alone = (await b1.groups.groupHeartbeat('g', member('m1'), [])).owned
    const owned = await settle('g', [
      { b: b1, m: member('m1') },
      { b: b2, m: member('m2') },
    ])
    const [o1, o2] = [owned.get('m1') ?? [], owned.get('m2') ?? []]
    expect(o1).toHaveLength(2)
    expect(o2).toHaveLength(2)
    expect([...keys(o1), ...keys(o2)].sort()).toEqual(ALL)
    for (const l of o2) expect(l.epoch).toBeGreaterThan(leaseOf(alone, l.partition).epoch)
    for (const l of o1) expect(l.epoch).toBe(leaseOf(alone, l.partition).epoch) // kept, not re-leased
  })

  it('commits: the owner with its epoch is written; a wrong epoch or a non-owner is fenced and not written', async () => {
    const [b1, b2] = await twoInstances()
    const { owned } = await b1.groups.groupHeartbeat('g', member('m1'), [])
    const e0 = leaseOf(owned, 0).epoch
    expect(await b1.groups.groupCommit('g', 'm1', [{ topic: 't', partition: 0, offset: 5, epoch: e0 }])).toEqual([])
    expect((await b2.admin.describeGroup('g'))?.commits.get(partitionKey('t', 0))).toBe(5)
    expect(await b1.groups.groupCommit('g', 'm1', [{ topic: 't', partition: 0, offset: 9, epoch: e0 + 1000 }])).toEqual(
      [{ topic: 't', partition: 0 }],
    )
    expect(await b2.groups.groupCommit('g', 'intruder', [{ topic: 't', partition: 0, offset: 9, epoch: e0 }])).toEqual([
      { topic: 't', partition: 0 },
    ])
    // One call, one good and one fenced commit: only the fenced one is reported.
    const e1 = leaseOf(owned, 1).epoch
    const mixed = await b1.groups.groupCommit('g', 'm1', [
      { topic: 't', partition: 1, offset: 3, epoch: e1 },
      { topic: 't', partition: 2, offset: 3, epoch: e1 + 1000 },
    ])
    expect(mixed).toEqual([{ topic: 't', partition: 2 }])
    const snap = await b1.admin.describeGroup('g')
    expect(snap?.commits.get(partitionKey('t', 0))).toBe(5)
    expect(snap?.commits.get(partitionKey('t', 1))).toBe(3)
    expect(snap?.commits.has(partitionKey('t', 2))).toBe(false)
    expect(leaseOf((await b1.groups.groupHeartbeat('g', member('m1'), [])).owned, 0).committed).toBe(5)
  })

  it("after a partition moves, the old owner's commit with its old epoch is fenced; the new owner's is written", async () => {
    const [b1, b2] = await twoInstances()
    const alone = (await b1.groups.groupHeartbeat('g', member('m1'), [])).owned
    const owned = await settle('g', [
      { b: b1, m: member('m1') },
      { b: b2, m: member('m2') },
    ])
    const moved = (owned.get('m2') ?? [])[0] as Lease
    const stale = { topic: 't', partition: moved.partition, offset: 7, epoch: leaseOf(alone, moved.partition).epoch }
    expect(await b1.groups.groupCommit('g', 'm1', [stale])).toEqual([{ topic: 't', partition: moved.partition }])
    expect(await b2.groups.groupCommit('g', 'm2', [{ ...stale, offset: 4, epoch: moved.epoch }])).toEqual([])
    expect((await b1.admin.describeGroup('g'))?.commits.get(partitionKey('t', moved.partition))).toBe(4)
  })

  it('groupLeave releases every lease: the remaining member takes them over, the leaver is fenced', async () => {
    const [b1, b2] = await twoInstances()
    const owned = await settle('g', [
      { b: b1, m: member('m1') },
      { b: b2, m: member('m2') },
    ])
    const mine = owned.get('m1') ?? []
    await b1.groups.groupLeave('g', 'm1')
    const after = await settle('g', [{ b: b2, m: member('m2') }])
    expect(keys(after.get('m2') ?? [])).toEqual(ALL)
    const snap = await b1.admin.describeGroup('g')
    expect(snap?.members.map((m) => m.id)).toEqual(['m2'])
    const l = mine[0] as Lease
    expect(
      await b1.groups.groupCommit('g', 'm1', [{ topic: 't', partition: l.partition, offset: 1, epoch: l.epoch }]),
    ).toEqual([{ topic: 't', partition: l.partition }])
  })

  it('a member silent for its sessionTimeoutMs is dropped and its leases go to the live member', async () => {
    const [b1, b2] = await twoInstances()
    await b1.groups.groupHeartbeat('g', member('m1', { sessionTimeoutMs: 300 }), [])
    const t0 = Date.now()
    let got: Lease[] = []
    while (got.length < P) {
      if (Date.now() - t0 > 10_000) throw new Error(`m2 owns ${keys(got).join(' ')} 10 s after m1 went silent`)
      got = (await b2.groups.groupHeartbeat('g', member('m2'), [])).owned
      if (got.length < P) await new Promise((r) => setTimeout(r, 25)) // m1's session runs out with time
    }
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250)
    expect((await b2.admin.describeGroup('g'))?.members.map((m) => m.id)).toEqual(['m2'])
  })

  it('a leaving member keeps its leases and gets nothing new; once released they go to the others', async () => {
    const [b1, b2] = await twoInstances()
    await settle('g', [
      { b: b1, m: member('m1') },
      { b: b2, m: member('m2') },
    ])
    const leaving = await b1.groups.groupHeartbeat('g', member('m1', { leaving: true }), [])
    expect(leaving.owned).toHaveLength(2)
    expect(keys(leaving.revoke)).toEqual(keys(leaving.owned))
    await b1.groups.groupHeartbeat('g', member('m1', { leaving: true }), leaving.revoke)
    const after = await settle('g', [{ b: b2, m: member('m2') }])
    expect(keys(after.get('m2') ?? [])).toEqual(ALL)
  })

  it('describeGroup and listGroups: undefined / absent before the first heartbeat, then members, assignments and topics', async () => {
    const [b1, b2] = await twoInstances()
    expect(await b1.admin.describeGroup('g')).toBeUndefined()
    expect(await b1.admin.listGroups()).toEqual([])
    const owned = await settle('g', [
      { b: b1, m: member('m1') },
      { b: b2, m: member('m2') },
    ])
    await b2.groups.groupHeartbeat('another', member('m3'), [])
    expect(await b1.admin.listGroups()).toEqual(['another', 'g'])
    const snap = await b2.admin.describeGroup('g')
    expect(snap?.group).toBe('g')
    expect(snap?.topics).toEqual(['t'])
    expect(snap?.commits.size).toBe(0)
    const members = [...(snap?.members ?? [])].sort((a, b) => a.id.localeCompare(b.id))
    expect(members.map((m) => [m.id, m.name, keys(m.assignments)])).toEqual([
      ['m1', 'name-m1', keys(owned.get('m1') ?? [])],
      ['m2', 'name-m2', keys(owned.get('m2') ?? [])],
    ])
  })

  it('resetGroup: refused while a live member consumes the topic, then overwrites the commits; creates a new group', async () => {
    const [b1, b2] = await twoInstances()
    await b1.createTopic(topicMeta('other', { partitions: 2 }))
    await b1.groups.groupHeartbeat('g', member('m1'), [])
    await expect(b2.admin.resetGroup('g', 't', new Map([[0, 3]]))).rejects.toBeInstanceOf(InvalidArgumentError)
    await b2.admin.resetGroup('g', 'other', new Map([[1, 8]])) // a topic nobody consumes now
    expect((await b2.admin.describeGroup('g'))?.commits.get(partitionKey('other', 1))).toBe(8)
    await b1.groups.groupLeave('g', 'm1')
    await b2.admin.resetGroup(
      'g',
      't',
      new Map([
        [0, 3],
        [2, 11],
      ]),
    )
    const snap = await b1.admin.describeGroup('g')
    expect([
      snap?.commits.get(partitionKey('t', 0)),
      snap?.commits.get(partitionKey('t', 2)),
      snap?.commits.has(partitionKey('t', 1)),
    ]).toEqual([3, 11, false])
    expect(snap?.topics).toEqual(expect.arrayContaining(['t', 'other']))
    await b2.admin.resetGroup('fresh', 't', new Map([[1, 2]]))
    expect(await b1.admin.listGroups()).toContain('fresh')
    expect((await b1.admin.describeGroup('fresh'))?.commits.get(partitionKey('t', 1))).toBe(2)
    expect(leaseOf((await b1.groups.groupHeartbeat('fresh', member('m9'), [])).owned, 1).committed).toBe(2)
  })

  it('deleteGroup: refused with live members, then removes the group; a second delete is GroupNotFoundError', async () => {
    const [b1, b2] = await twoInstances()
    const { owned } = await b1.groups.groupHeartbeat('g', member('m1'), [])
    await b1.groups.groupCommit('g', 'm1', [{ topic: 't', partition: 0, offset: 6, epoch: leaseOf(owned, 0).epoch }])
    await expect(b2.admin.deleteGroup('g')).rejects.toBeInstanceOf(InvalidArgumentError)
    await b1.groups.groupLeave('g', 'm1')
    await b2.admin.deleteGroup('g')
    expect(await b1.admin.describeGroup('g')).toBeUndefined()
    expect(await b1.admin.listGroups()).toEqual([])
    await expect(b1.admin.deleteGroup('g')).rejects.toBeInstanceOf(GroupNotFoundError)
    await expect(b1.admin.deleteGroup('never')).rejects.toBeInstanceOf(GroupNotFoundError)
    // The name can be used again: a new group without the old commits.
    expect(leaseOf((await b1.groups.groupHeartbeat('g', member('m1'), [])).owned, 0).committed).toBeUndefined()
  })

  it('watchGroup calls onChange when a member of another instance joins, and when it leaves', async () => {
    const [b1, b2] = await twoInstances()
    await b1.groups.groupHeartbeat('g', member('m1'), [])
    const calls = new Calls()
    const unsubscribe = b1.groups.watchGroup('g', calls.fn, false)
    // The contract names no moment from which a watch is armed (Redis subscribes in the
    // background; heartbeats cover notices lost meanwhile): change the group until a notice comes…
    let notified = false
    for (let i = 0; i < 50 && !notified; i++) {
      const seen = calls.count
      await b2.groups.groupHeartbeat('g', member('m2', { leaving: i % 2 === 1 }), [])
      notified = await calls.after(seen, 200, 'onChange').then(
        () => true,
        () => false,
      )
    }
    expect(notified).toBe(true)
    // …then every change is noticed.
    const seen = calls.count
    await b2.groups.groupLeave('g', 'm2')
    await calls.after(seen, 5000, 'onChange after m2 left')
    unsubscribe()
    unsubscribe()
  })
})
