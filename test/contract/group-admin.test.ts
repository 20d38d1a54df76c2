/**
 * Backend contract, group administration (`Backend.admin`, a GroupAdmin) over both group modes:
 * describe (members, commits, shared pending), list, reset, delete and the per-topic commits that
 * consumed retention uses. Shared-mode cases run where the kind has shared groups; the others
 * assert that it has none. (The partitioned basics are also in groups.test.ts.)
 */
import { describe, expect, it } from 'vitest'
import { GroupNotFoundError, InvalidArgumentError } from '../../src/core/errors.js'
import { partitionKey } from '../../src/core/partition-key.js'
import { ackShared, commitPartitioned, memberSpec } from './admin-fixture.js'
import { texts, topicMeta } from './fixture.js'
import { kinds, perTest } from './kinds.js'

const tps = (topic: string, n: number) => Array.from({ length: n }, (_, partition) => ({ topic, partition }))

describe.each(kinds())('$name: group admin', (kind) => {
  kind.hooks()
  const ctx = perTest(kind)

  /** Topic `t`, 2 partitions, 6 entries on 0 and 4 on 1, on a fresh store. */
  async function setUp() {
    const b = await ctx.fresh({ pollMs: 60_000 })
    const meta = topicMeta('t', { partitions: 2 })
    await b.createTopic(meta)
    await b.append('t', 0, texts(meta, 'a', 6), 'p')
    await b.append('t', 1, texts(meta, 'b', 4), 'p')
    return b
  }

  it('a group that does not exist: describeGroup is undefined, listGroups and topicCommits are empty', async () => {
    const b = await setUp()
    expect(await b.admin.describeGroup('nobody')).toBeUndefined()
    expect(await b.admin.listGroups()).toEqual([])
    expect(await b.admin.topicCommits('t')).toEqual([])
  })

  it('partitioned: after commits, describeGroup shows the member with its leases, the commits and no pending', async () => {
    const b = await setUp()
    await commitPartitioned(b, 'g', 't', [4, 1], { leave: false })
    const d = await (await ctx.open()).admin.describeGroup('g')
    expect(d?.group).toBe('g')
    expect(d?.topics).toEqual(['t'])
    expect(d?.members).toEqual([{ id: 'g-m', name: 'name-g-m', assignments: expect.arrayContaining(tps('t', 2)) }])
    expect([d?.commits.get(partitionKey('t', 0)), d?.commits.get(partitionKey('t', 1))]).toEqual([4, 1])
    expect(d?.pending.size).toBe(0)
    expect(await b.admin.topicCommits('t')).toEqual([
      new Map([
        [0, 4],
        [1, 1],
      ]),
    ])
    expect(await b.admin.topicCommits('other')).toEqual([])
  })

  it('shared (where supported): after acknowledgements, describeGroup shows the member on every partition, the commits and the pending counts', async () => {
    const b = await setUp()
    if (!kind.caps.shared) return expect(b.shared).toBeUndefined()
    const m = await ackShared(b, 'sg', 't', 10, [2, 4])
    const d = await (await ctx.open()).admin.describeGroup('sg')
    expect(d?.members).toEqual([{ id: 's1', name: 's1', assignments: tps('t', 2) }])
    expect([d?.commits.get(partitionKey('t', 0)), d?.commits.get(partitionKey('t', 1))]).toEqual([2, 4])
    expect([d?.pending.get(partitionKey('t', 0)), d?.pending.get(partitionKey('t', 1))]).toEqual([4, 0])
    await commitPartitioned(b, 'pg', 't', [1, 1])
    expect(await b.admin.listGroups()).toEqual(['pg', 'sg'])
    expect(await b.admin.topicCommits('t')).toEqual(
      expect.arrayContaining([
        new Map([
          [0, 2],
          [1, 4],
        ]),
        new Map([
          [0, 1],
          [1, 1],
        ]),
      ]),
    )
    await m.leave()
  })

  it('resetGroup: refused while a live member consumes the topic, then sets the given offsets', async () => {
    const b = await setUp()
    await commitPartitioned(b, 'g', 't', [5, 3], { leave: false })
    await expect(b.admin.resetGroup('g', 't', new Map([[0, 0]]))).rejects.toBeInstanceOf(InvalidArgumentError)
    expect((await b.admin.describeGroup('g'))?.commits.get(partitionKey('t', 0))).toBe(5)
    await b.groups.groupLeave('g', 'g-m')
    await b.admin.resetGroup('g', 't', new Map([[0, 2]]))
    const d = await b.admin.describeGroup('g')
    expect([d?.commits.get(partitionKey('t', 0)), d?.commits.get(partitionKey('t', 1))]).toEqual([2, 3])
    expect(
      (await b.groups.groupHeartbeat('g', memberSpec('again', ['t']), [])).owned.find((l) => l.partition === 0)
        ?.committed,
    ).toBe(2)
  })

  it('resetGroup of a shared group (where supported): refused while its member is live, then moves its read position', async () => {
    const b = await setUp()
    if (!kind.caps.shared) return expect(b.shared).toBeUndefined()
    const m = await ackShared(b, 'sg', 't', 10, [6, 4])
    await expect(b.admin.resetGroup('sg', 't', new Map([[0, 3]]))).rejects.toBeInstanceOf(InvalidArgumentError)
    await m.leave()
    await b.admin.resetGroup('sg', 't', new Map([[0, 3]]))
    expect((await b.admin.describeGroup('sg'))?.commits.get(partitionKey('t', 0))).toBe(3)
    const again = await ackShared(b, 'sg', 't', 3, [6, 4], 's2') // partition 0 from offset 3, nothing on 1
    expect((await b.admin.describeGroup('sg'))?.commits.get(partitionKey('t', 0))).toBe(6)
    await again.leave()
  })

  it('deleteGroup: refused with live members (either mode); then describeGroup is undefined and listGroups omits it', async () => {
    const b = await setUp()
    await commitPartitioned(b, 'g', 't', [1, 1], { leave: false })
    await expect(b.admin.deleteGroup('g')).rejects.toBeInstanceOf(InvalidArgumentError)
    await b.groups.groupLeave('g', 'g-m')
    await b.admin.deleteGroup('g')
    expect(await b.admin.describeGroup('g')).toBeUndefined()
    expect(await b.admin.listGroups()).toEqual([])
    await expect(b.admin.deleteGroup('g')).rejects.toBeInstanceOf(GroupNotFoundError)
    if (!kind.caps.shared) return expect(b.shared).toBeUndefined()
    const m = await ackShared(b, 'sg', 't', 10, [6, 4])
    await expect(b.admin.deleteGroup('sg')).rejects.toBeInstanceOf(InvalidArgumentError)
    await m.leave()
    await b.admin.deleteGroup('sg')
    expect(await b.admin.describeGroup('sg')).toBeUndefined()
    expect(await b.admin.topicCommits('t')).toEqual([])
    // Its consumer groups on the streams are gone too: the name starts afresh from the start, every entry again.
    const fresh = await ackShared(b, 'sg', 't', 10, [0, 0], 's3')
    expect((await b.admin.describeGroup('sg'))?.pending.get(partitionKey('t', 0))).toBe(6)
    await fresh.leave()
  })
})
