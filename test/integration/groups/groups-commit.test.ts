// Consumer groups in one process: what is committed, when, and never past an un-acked message. Public API only (DESIGN §3.6); shared fixtures in groups-fixtures.ts.
import { describe, expect, it } from 'vitest'
import { PROMPT_MS, sleep, until } from '../../helpers/wait.js'
import { FAST, committed, fill, pollN, twain, useGroupStore, waitAssigned } from './groups-fixtures.js'
import { everyStore } from '../../conformance/backends.js'

describe.each(everyStore())('consumer groups on $name', (kind) => {
  useGroupStore(kind)

  describe('commits', () => {
    it('commits only the contiguous acked prefix (acks out of order)', async () => {
      await twain.createTopic('t')
      await fill('t', 0, 6)
      const c = twain.consumer<string>('t', { group: 'g', ...FAST, commitIntervalMs: 60_000 })
      const ms = await pollN(c, 6)
      for (const i of [1, 0, 3, 5]) ms[i]!.ack()
      await c.commit()
      expect(await committed('g', 't')).toEqual([2])
      ms[4]!.ack()
      await c.commit()
      expect(await committed('g', 't')).toEqual([2])
      ms[2]!.ack()
      await c.commit()
      expect(await committed('g', 't')).toEqual([6])
      const d = await twain.describeGroup('g')
      expect(d.topics).toEqual([{ topic: 't', partition: 0, committed: 6, end: 6, lag: 0, lagMs: 0 }])
      await c.close()
    })

    it('commits nothing that was not acked (also not by the periodic commit or close)', async () => {
      await twain.createTopic('t', { partitions: 2 })
      await fill('t', 0, 4)
      await fill('t', 1, 4)
      const c = twain.consumer<string>('t', { group: 'g', ...FAST, drainTimeoutMs: 300 })
      const ms = await pollN(c, 8)
      await c.commit()
      await sleep(300) // several commit intervals: none of them commits anything
      expect(await committed('g', 't')).toEqual([0, 0])
      const d = await twain.describeGroup('g')
      expect(d.topics.map((t) => [t.committed, t.end, t.lag])).toEqual([
        [0, 4, 4],
        [0, 4, 4],
      ])
      ms.filter((m) => m.partition === 1 && m.offset < 2).forEach((m) => m.ack())
      const t0 = Date.now()
      await c.close() // waits up to the drain timeout for the rest
      expect(Date.now() - t0).toBeLessThan(PROMPT_MS)
      expect(await committed('g', 't')).toEqual([0, 2])
    })

    it("the periodic commit writes acked offsets by itself and emits 'commit'", async () => {
      await twain.createTopic('t')
      await fill('t', 0, 3)
      const c = twain.consumer<string>('t', { group: 'g', ...FAST })
      const events: Array<{ topic: string; partition: number; offset: number }> = []
      const off = c.on('commit', (cs) => events.push(...cs))
      const ms = await pollN(c, 3)
      ms.forEach((m) => m.ack())
      await until(async () => (await committed('g', 't'))[0] === 3, 2000, 'periodic commit')
      await until(() => events.some((e) => e.offset === 3), 1000, 'commit event')
      expect(events.at(-1)).toEqual({ topic: 't', partition: 0, offset: 3 })
      off()
      const count = events.length
      await fill('t', 0, 1)
      ;(await pollN(c, 1))[0]!.ack()
      await c.commit()
      expect(await committed('g', 't')).toEqual([4])
      expect(events.length).toBe(count) // unsubscribed
      await c.close()
    })

    it('a nacked message holds the commit point until it is acked', async () => {
      await twain.createTopic('t')
      await fill('t', 0, 3)
      const c = twain.consumer<string>('t', { group: 'g', ...FAST })
      const ms = await pollN(c, 3)
      ms[0]!.nack()
      ms[1]!.ack()
      ms[2]!.ack()
      await c.commit()
      expect(await committed('g', 't')).toEqual([0])
      const again = await pollN(c, 1)
      expect(again[0]!.offset).toBe(0)
      expect(again[0]!.deliveryCount).toBe(2)
      again[0]!.ack()
      await c.commit()
      expect(await committed('g', 't')).toEqual([3])
      await c.close()
    })

    it('close() never commits past a nacked message that was waiting for redelivery', async () => {
      await twain.createTopic('t')
      await fill('t', 0, 10)
      const c = twain.consumer<string>('t', { group: 'g', ...FAST, commitIntervalMs: 60_000 })
      const ms = await pollN(c, 5) // 0..4 delivered, 5..9 buffered
      ms[0]!.ack()
      ms[1]!.ack()
      ms[3]!.ack()
      ms[4]!.ack()
      ms[2]!.nack() // redelivered after the buffered ones
      await c.close()
      // offset 2 was never acked: the group must not have moved past it
      expect(await committed('g', 't')).toEqual([2])
    })

    it('close() does not commit past a nacked message (two messages: nack the first, ack the second)', async () => {
      await twain.createTopic('t')
      await fill('t', 0, 2)
      const c = twain.consumer<string>('t', { group: 'g', ...FAST, commitIntervalMs: 60_000 })
      const [m0, m1] = await pollN(c, 2)
      m0!.nack()
      m1!.ack()
      await c.close()
      expect(await committed('g', 't')).toEqual([0])
    })

    it('a nacked message on a partition that moves to another member is delivered to the new owner', async () => {
      await twain.createTopic('t', { partitions: 2 })
      await fill('t', 1, 10)
      const a = twain.consumer<string>('t', { group: 'g', ...FAST, commitIntervalMs: 60_000 })
      await waitAssigned(a, 2)
      const ms = await pollN(a, 5) // partition 1: 0..4 delivered, 5..9 buffered
      for (const i of [0, 1, 3, 4]) ms[i]!.ack()
      ms[2]!.nack() // back in the buffer, behind 5..9
      const b = twain.consumer<string>('t', { group: 'g', ...FAST })
      await until(() => a.assignments().length === 1 && b.assignments().length === 1, 3000, 'a 1/1 split')
      const got: number[] = []
      await until(
        () => {
          for (const m of [...a.pollMany(100), ...b.pollMany(100)]) {
            if (m.partition === 1) got.push(m.offset)
            m.ack()
          }
          return got.includes(9)
        },
        3000,
        'the rest of partition 1',
      )
      expect(got).toContain(2)
      await a.close()
      await b.close()
    })
  })
})
