// Consumer groups in one process: events and rebalancing among members. Public API only (DESIGN §3.6); shared fixtures in groups-fixtures.ts.
import { describe, expect, it } from 'vitest'
import { type Consumer } from '../../../src/index.js'
import { PROMPT_MS, sleep, until } from '../../helpers/wait.js'
import { FAST, committed, fill, pollN, sortTp, twain, useGroupStore, waitAssigned } from './groups-fixtures.js'
import { everyStore } from '../../conformance/backends.js'

describe.each(everyStore())('consumer groups on $name', (kind) => {
  useGroupStore(kind)

  describe('events', () => {
    it("on() returns an unsubscribe; 'assigned' and 'revoked' report partitions", async () => {
      await twain.createTopic('t', { partitions: 2 })
      const c = twain.consumer('t', { group: 'g', ...FAST })
      const assigned: string[] = []
      const revoked: string[] = []
      const revoked2: string[] = []
      const offA = c.on('assigned', (tps) => assigned.push(...sortTp(tps)))
      c.on('revoked', (tps) => revoked.push(...sortTp(tps)))
      const offR2 = c.on('revoked', (tps) => revoked2.push(...sortTp(tps)))
      expect(typeof offA).toBe('function')
      await waitAssigned(c, 2)
      await until(() => assigned.length === 2, 1000, 'assigned')
      expect(assigned.sort()).toEqual(['t/0', 't/1'])
      offR2()
      await c.close()
      expect(revoked.sort()).toEqual(['t/0', 't/1'])
      expect(revoked2).toEqual([])
    })

    it("a second member makes the first emit 'revoked' for what moved, and the second 'assigned'", async () => {
      await twain.createTopic('t', { partitions: 4 })
      const a = twain.consumer('t', { group: 'g', ...FAST })
      await waitAssigned(a, 4)
      const revoked: string[] = []
      a.on('revoked', (tps) => revoked.push(...sortTp(tps)))
      const b = twain.consumer('t', { group: 'g', ...FAST })
      const assignedB: string[] = []
      b.on('assigned', (tps) => assignedB.push(...sortTp(tps)))
      await until(() => a.assignments().length === 2 && b.assignments().length === 2, 2000, 'a 2/2 split')
      await until(() => revoked.length === 2 && assignedB.length === 2, 1000, 'events')
      expect(revoked.sort()).toEqual(assignedB.sort())
      expect([...sortTp(a.assignments()), ...sortTp(b.assignments())].sort()).toEqual(['t/0', 't/1', 't/2', 't/3'])
      await b.close()
      await a.close()
    })
  })

  describe('rebalancing in one process', () => {
    it('splits partitions among members as they join and leave (counts differ ≤ 1, each partition owned once)', async () => {
      await twain.createTopic('t', { partitions: 7 })
      const errors: Error[] = []
      const members: Consumer[] = []
      const check = async (n: number) => {
        await until(
          () => {
            const counts = members.map((m) => m.assignments().length)
            const all = members.flatMap((m) => sortTp(m.assignments()))
            return all.length === 7 && new Set(all).size === 7 && Math.max(...counts) - Math.min(...counts) <= 1
          },
          3000,
          `a balanced split over ${n} members (${members.map((m) => m.assignments().length).join(',')})`,
        )
        const d = await twain.describeGroup('g')
        expect(d.members).toHaveLength(n)
        const owned = d.members.flatMap((m) => sortTp(m.assignments))
        expect(owned.sort()).toEqual(['t/0', 't/1', 't/2', 't/3', 't/4', 't/5', 't/6'])
      }
      const owners = () =>
        new Map(members.flatMap((m) => m.assignments().map((a) => [`${a.topic}/${a.partition}`, m] as const)))
      for (let i = 0; i < 4; i++) {
        const before = owners()
        const c = twain.consumer('t', { group: 'g', ...FAST })
        c.on('error', (e) => errors.push(e))
        members.push(c)
        await check(members.length)
        // sticky: a partition either stays with its owner or goes to the newcomer
        for (const [k, owner] of owners()) if (before.has(k)) expect([before.get(k), c]).toContain(owner)
      }
      while (members.length > 1) {
        await members.shift()!.close()
        await check(members.length)
      }
      await members[0]!.close()
      expect(errors).toEqual([])
    })

    it('a member joining an idle group gets its partitions at once, without waiting for a heartbeat', async () => {
      await twain.createTopic('t', { partitions: 4 })
      // Heartbeats every 10 s: a rebalance that waited for one would show.
      const a = twain.consumer('t', { group: 'g', sessionTimeoutMs: 30_000 })
      await waitAssigned(a, 4)
      const t0 = Date.now()
      const b = twain.consumer('t', { group: 'g', sessionTimeoutMs: 30_000 })
      await until(
        () => b.assignments().length === 2 && a.assignments().length === 2,
        PROMPT_MS,
        'the newcomer to get 2 partitions',
      )
      expect(Date.now() - t0).toBeLessThan(PROMPT_MS)
      await b.close()
      // and when it leaves, the other takes everything back quickly
      const t1 = Date.now()
      await until(() => a.assignments().length === 4, PROMPT_MS, 'the remaining member to get everything')
      expect(Date.now() - t1).toBeLessThan(PROMPT_MS)
      await a.close()
    })

    it('rebalance() runs a coordination step now and resolves after it', async () => {
      await twain.createTopic('t', { partitions: 2 })
      // heartbeats far apart: only rebalance() (and the group watch) drive the steps
      const opts = { group: 'g', sessionTimeoutMs: 30_000, heartbeatIntervalMs: 10_000, commitIntervalMs: 100 }
      const a = twain.consumer('t', opts)
      await a.rebalance()
      expect(a.assignments()).toHaveLength(2)
      const b = twain.consumer('t', opts)
      await b.rebalance()
      await a.rebalance()
      await a.rebalance()
      await b.rebalance()
      await until(() => a.assignments().length === 1 && b.assignments().length === 1, 2000, 'a 1/1 split')
      await a.close()
      await b.close()
    })

    it('six members created at once share 12 partitions two each, without errors', async () => {
      await twain.createTopic('t', { partitions: 12 })
      const errors: Error[] = []
      const cs = Array.from({ length: 6 }, () => {
        const c = twain.consumer('t', { group: 'g', ...FAST })
        c.on('error', (e) => errors.push(e))
        return c
      })
      await until(() => cs.every((c) => c.assignments().length === 2), 5000, 'two partitions each')
      expect(new Set(cs.flatMap((c) => sortTp(c.assignments()))).size).toBe(12)
      await Promise.all(cs.map((c) => c.close()))
      expect(errors).toEqual([])
    })

    it('a partition moves only after its in-flight messages are acked (or the drain times out)', async () => {
      await twain.createTopic('t', { partitions: 2 })
      await fill('t', 0, 3)
      await fill('t', 1, 3)
      const a = twain.consumer<string>('t', { group: 'g', ...FAST, commitIntervalMs: 60_000 })
      const held = await pollN(a, 6)
      const b = twain.consumer<string>('t', { group: 'g', ...FAST })
      await sleep(800) // well past several heartbeats, within the drain timeout (the session timeout, 2 s)
      expect(b.assignments()).toEqual([])
      expect(a.assignments()).toHaveLength(2)
      held.forEach((m) => m.ack())
      await until(() => b.assignments().length === 1 && a.assignments().length === 1, 1000, 'the move after the acks')
      await sleep(200) // nothing arrives within 200 ms
      expect(b.pollMany(10)).toEqual([]) // acked before the move: nothing is delivered again
      await a.close()
      await b.close()
      expect(await committed('g', 't')).toEqual([3, 3])
    })

    it('an un-acked in-flight message is given up after the drain timeout and redelivered by the new owner', async () => {
      await twain.createTopic('t', { partitions: 2 })
      await fill('t', 0, 1)
      await fill('t', 1, 1)
      const opts = {
        group: 'g',
        sessionTimeoutMs: 2000,
        heartbeatIntervalMs: 100,
        commitIntervalMs: 100,
        drainTimeoutMs: 500,
      }
      const a = twain.consumer<string>('t', opts)
      await pollN(a, 2) // never acked
      const b = twain.consumer<string>('t', opts)
      const t0 = Date.now()
      await until(() => b.assignments().length === 1, 3000, 'the move after the drain timeout')
      expect(Date.now() - t0).toBeGreaterThanOrEqual(400)
      const [again] = await pollN(b, 1)
      expect(again!.deliveryCount).toBe(1)
      again!.ack()
      await b.close()
      await a.close()
    })

    it('messages in flight on a moving partition are delivered exactly once when acked before the move', async () => {
      await twain.createTopic('t', { partitions: 4 })
      for (let p = 0; p < 4; p++) await fill('t', p, 50)
      const seen: string[] = []
      const a = twain.consumer<string>('t', { group: 'g', ...FAST, maxInFlight: 10 })
      const readA = (async () => {
        for await (const m of a) {
          seen.push(`${m.partition}@${m.offset}`)
          m.ack()
          await sleep(2) // a slow handler, so messages are in flight when b joins
        }
      })()
      await until(() => seen.length >= 30, 5000, 'a to read some')
      const b = twain.consumer<string>('t', { group: 'g', ...FAST, maxInFlight: 10 })
      const readB = (async () => {
        for await (const m of b) {
          seen.push(`${m.partition}@${m.offset}`)
          m.ack()
        }
      })()
      await until(() => new Set(seen).size === 200, 10_000, 'all 200 messages')
      expect(seen.length).toBe(200) // acked before moving: nothing is read twice
      await a.close()
      await b.close()
      await Promise.all([readA, readB])
    })
  })
})
