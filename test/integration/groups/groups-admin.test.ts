// Consumer groups in one process: describe, list, delete and reset groups. Public API only (DESIGN §3.6); shared fixtures in groups-fixtures.ts.
import { describe, expect, it } from 'vitest'
import { InvalidArgumentError } from '../../../src/index.js'
import { sleep } from '../../helpers/wait.js'
import { FAST, committed, fill, pollN, sortTp, twain, useGroupStore, waitAssigned } from './groups-fixtures.js'
import { everyStore } from '../../conformance/backends.js'

describe.each(everyStore())('consumer groups on $name', (kind) => {
  useGroupStore(kind)

  describe('admin', () => {
    it('describeGroup: members, per-partition committed/end/lag; committed is the partition start when nothing was committed', async () => {
      // twainmq-v1 refuses retention limits (InvalidArgumentError)
      await twain.createTopic('t', { partitions: 2, ...(kind.caps.retention ? { retention: { maxMessages: 4 } } : {}) })
      await fill('t', 0, 3)
      const c = twain.consumer<string>('t', { group: 'g', ...FAST, commitIntervalMs: 60_000 })
      await waitAssigned(c, 2)
      const d = await twain.describeGroup('g')
      expect(d.group).toBe('g')
      expect(d.members).toHaveLength(1)
      expect(d.members[0]!.id).toBe(c.memberId)
      expect(sortTp(d.members[0]!.assignments)).toEqual(['t/0', 't/1'])
      expect(d.topics).toEqual([
        { topic: 't', partition: 0, committed: 0, end: 3, lag: 3, lagMs: expect.any(Number) },
        { topic: 't', partition: 1, committed: 0, end: 0, lag: 0, lagMs: 0 },
      ])
      await c.close()
    })

    it('describeGroup reports the partition start as committed after the history was trimmed', async () => {
      await twain.createTopic('t')
      await fill('t', 0, 10)
      if (kind.caps.trim) await twain.trim('t', { before: { 0: 6 } })
      else await expect(twain.trim('t', { before: { 0: 6 } })).rejects.toBeInstanceOf(InvalidArgumentError) // TwainMQ keeps every chunk
      const start = (await twain.describeTopic('t')).offsets[0]!.start
      expect(start > 0).toBe(kind.caps.trim)
      await twain.resetGroup('g', 't', { 0: 0 })
      const d = await twain.describeGroup('g')
      expect(d.topics).toEqual([
        { topic: 't', partition: 0, committed: start, end: 10, lag: 10 - start, lagMs: expect.any(Number) },
      ])
      const c = twain.consumer<string>('t', { group: 'g', ...FAST })
      const ms = await pollN(c, 10 - start)
      expect(ms[0]!.offset).toBe(start)
      ms.forEach((m) => m.ack())
      await c.close()
    })

    it('listGroups lists the groups; deleteGroup removes one (refused while it has live members)', async () => {
      await twain.createTopic('t')
      expect(await twain.listGroups()).toEqual([])
      const a = twain.consumer('t', { group: 'g1', ...FAST })
      const b = twain.consumer('t', { group: 'g2', ...FAST })
      await waitAssigned(a, 1)
      await waitAssigned(b, 1)
      expect(await twain.listGroups()).toEqual(['g1', 'g2'])
      await expect(twain.deleteGroup('g1')).rejects.toBeInstanceOf(InvalidArgumentError)
      await a.close()
      await twain.deleteGroup('g1')
      expect(await twain.listGroups()).toEqual(['g2'])
      await expect(twain.describeGroup('g1')).rejects.toThrow()
      await b.close()
    })

    it('a deleted group starts over from the start', async () => {
      await twain.createTopic('t')
      await fill('t', 0, 3)
      const a = twain.consumer<string>('t', { group: 'g', ...FAST })
      ;(await pollN(a, 3)).forEach((m) => m.ack())
      await a.close()
      expect(await committed('g', 't')).toEqual([3])
      await twain.deleteGroup('g')
      const b = twain.consumer<string>('t', { group: 'g', ...FAST })
      const ms = await pollN(b, 3)
      expect(ms.map((m) => m.offset)).toEqual([0, 1, 2])
      ms.forEach((m) => m.ack())
      await b.close()
    })

    it("resetGroup to 'start', 'end' and { p: offset }; refused while live members consume the topic", async () => {
      await twain.createTopic('t', { partitions: 2 })
      await fill('t', 0, 5)
      await fill('t', 1, 4)
      const a = twain.consumer<string>('t', { group: 'g', ...FAST })
      ;(await pollN(a, 9)).forEach((m) => m.ack())
      await a.commit()
      await expect(twain.resetGroup('g', 't', 'start')).rejects.toBeInstanceOf(InvalidArgumentError)
      expect(await committed('g', 't')).toEqual([5, 4])
      await a.close()

      await twain.resetGroup('g', 't', 'start')
      expect(await committed('g', 't')).toEqual([0, 0])
      const b = twain.consumer<string>('t', { group: 'g', ...FAST, commitIntervalMs: 60_000 })
      const again = await pollN(b, 9)
      expect(again.length).toBe(9)
      again.forEach((m) => m.ack())
      await b.close()

      await twain.resetGroup('g', 't', 'end')
      expect(await committed('g', 't')).toEqual([5, 4])
      await twain.resetGroup('g', 't', { 1: 2 })
      expect(await committed('g', 't')).toEqual([5, 2])
      // Past the end the group would skip what is sent next: refused, nothing changed. The end itself is fine.
      await expect(twain.resetGroup('g', 't', { 0: 50 })).rejects.toThrow(
        /Offset 50 of partition 0 is past the end of topic "t"'s partition \(5\): the group would skip the next 45 messages/,
      )
      await twain.resetGroup('g', 't', { 0: 5 })
      expect(await committed('g', 't')).toEqual([5, 2])
      const c = twain.consumer<string>('t', { group: 'g', ...FAST })
      const got = await pollN(c, 2)
      expect(got.map((m) => [m.partition, m.offset])).toEqual([
        [1, 2],
        [1, 3],
      ])
      await sleep(200) // nothing before the reset point arrives within 200 ms
      expect(c.pollMany(10)).toEqual([])
      got.forEach((m) => m.ack())
      await c.close()
    })

    it('resetGroup is allowed while live members of the group read only other topics', async () => {
      await twain.createTopic('t')
      await twain.createTopic('u')
      await fill('t', 0, 3)
      const c = twain.consumer('u', { group: 'g', ...FAST })
      await waitAssigned(c, 1)
      await twain.resetGroup('g', 't', 'end')
      expect(await committed('g', 't')).toEqual([3])
      await c.close()
    })

    it('rejects bad consumer options with InvalidArgumentError', async () => {
      expect(() => twain.consumer('t', { group: '' })).toThrow(InvalidArgumentError)
      expect(() => twain.consumer('t', { group: 'g', from: 'middle' as 'start' })).toThrow(InvalidArgumentError)
      expect(() => twain.consumer('t', { group: 'g', maxInFlight: 0 })).toThrow(InvalidArgumentError)
      if (kind.caps.shared)
        await twain.consumer('t', { group: 'g', mode: 'shared' }).close() // Redis has shared groups
      else expect(() => twain.consumer('t', { group: 'g', mode: 'shared' })).toThrow(InvalidArgumentError)
      expect(() => twain.consumer([], { group: 'g' })).toThrow(InvalidArgumentError)
    })
  })
})
