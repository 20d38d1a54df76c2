// Consumer groups in one process: joining, consuming, and iterations as views of one membership. Public API only (DESIGN §3.6); shared fixtures in groups-fixtures.ts.
import { describe, expect, it } from 'vitest'
import { from as rxFrom, take as rxTake, toArray as rxToArray, firstValueFrom } from 'rxjs'
import { TopicNotFoundError } from '../../../src/index.js'
import { PROMPT_MS, sleep, until } from '../../helpers/wait.js'
import {
  FAST,
  committed,
  fill,
  iterN,
  pollN,
  sortTp,
  twain,
  useGroupStore,
  waitAssigned,
  waitingReads,
} from './groups-fixtures.js'
import { everyStore } from '../../conformance/backends.js'

describe.each(everyStore())('consumer groups on $name', (kind) => {
  useGroupStore(kind)

  describe('joining and consuming', () => {
    it('a lone member owns every partition at once on joining, without waiting for a heartbeat', async () => {
      await twain.createTopic('t', { partitions: 4 })
      const started = Date.now()
      const c = twain.consumer('t', { group: 'g', sessionTimeoutMs: 30_000 }) // heartbeats every 10 s: waiting for one would show
      const assigned: string[] = []
      c.on('assigned', (tps) => assigned.push(...sortTp(tps)))
      await waitAssigned(c, 4, PROMPT_MS)
      expect(Date.now() - started).toBeLessThan(PROMPT_MS)
      expect(sortTp(c.assignments())).toEqual(['t/0', 't/1', 't/2', 't/3'])
      await until(() => assigned.length === 4, 1000, 'assigned events')
      expect(assigned.sort()).toEqual(['t/0', 't/1', 't/2', 't/3'])
      await c.close()
    })

    it('for await + ack delivers every message once in per-partition order and commits all of them', async () => {
      await twain.createTopic('t', { partitions: 3 })
      await fill('t', 0, 7)
      await fill('t', 1, 5)
      await fill('t', 2, 3)
      const c = twain.consumer<string>('t', { group: 'g', ...FAST })
      const got = await iterN(c, 15, (m) => m.ack())
      for (let p = 0; p < 3; p++) {
        const offs = got.filter((m) => m.partition === p).map((m) => m.offset)
        expect(offs).toEqual(offs.map((_, i) => i))
      }
      expect(got.map((m) => m.value).sort()).toEqual(
        [
          ...Array.from({ length: 7 }, (_, i) => `p0-${i}`),
          ...Array.from({ length: 5 }, (_, i) => `p1-${i}`),
          ...Array.from({ length: 3 }, (_, i) => `p2-${i}`),
        ].sort(),
      )
      expect(got.every((m) => m.deliveryCount === 1)).toBe(true)
      await c.commit()
      expect(await committed('g', 't')).toEqual([7, 5, 3])
      const d = await twain.describeGroup('g')
      expect(d.topics.map((t) => t.lag)).toEqual([0, 0, 0])
      // nothing more arrives (the first poll starts reads again: the iteration ended)
      expect(c.pollMany(10)).toEqual([])
      await sleep(200) // nothing arrives within 200 ms
      expect(c.pollMany(10)).toEqual([])
      await c.close()
    })

    it('messages sent after the member joined (a consumer made before any producer) are delivered', async () => {
      await twain.createTopic('t', { partitions: 2 })
      // Counted before the member exists: a Redis member watches (XREAD BLOCK) each partition it owns
      // from its assignment on, a file member opens its directory watch when a view waits.
      const before = await waitingReads()
      const c = twain.consumer<string>('t', { group: 'g', ...FAST })
      await waitAssigned(c, 2)
      const reading = iterN(c, 4, (m) => m.ack())
      await until(async () => (await waitingReads()) > before, 5000, 'the view to wait for new data')
      await fill('t', 0, 2, 'a')
      await fill('t', 1, 2, 'b')
      expect((await reading).map((m) => m.value).sort()).toEqual(['a0', 'a1', 'b0', 'b1'])
      await c.close()
    })

    it("from: 'start' (the default) reads the history", async () => {
      await twain.createTopic('t')
      await fill('t', 0, 5)
      const c = twain.consumer<string>('t', { group: 'g', ...FAST })
      const ms = await pollN(c, 5)
      expect(ms.map((m) => m.offset)).toEqual([0, 1, 2, 3, 4])
      ms.forEach((m) => m.ack())
      await c.close()
    })

    it("from: 'end' on an idle topic with history delivers nothing old, only what comes later", async () => {
      await twain.createTopic('t', { partitions: 2 })
      await fill('t', 0, 5)
      await fill('t', 1, 3)
      const c = twain.consumer<string>('t', { group: 'g', from: 'end', ...FAST })
      expect(c.pollMany(100)).toEqual([]) // starts its reads (fetching is demand-driven)
      await waitAssigned(c, 2)
      await sleep(300) // nothing old arrives within 300 ms
      expect(c.pollMany(100)).toEqual([])
      await fill('t', 1, 1, 'new')
      const got = await pollN(c, 1)
      expect(got.map((m) => [m.partition, m.offset, m.value])).toEqual([[1, 3, 'new0']])
      got.forEach((m) => m.ack())
      await c.close()
    })

    it("from: 'end' is committed at once, so a later member resumes there and not at the start", async () => {
      await twain.createTopic('t', { partitions: 2 })
      await fill('t', 0, 5)
      await fill('t', 1, 3)
      // a long commit interval: only the immediate 'end' commit can explain what describeGroup shows
      const a = twain.consumer<string>('t', {
        group: 'g',
        from: 'end',
        sessionTimeoutMs: 2000,
        heartbeatIntervalMs: 200,
        commitIntervalMs: 60_000,
      })
      await waitAssigned(a, 2)
      await until(async () => (await committed('g', 't')).join() === '5,3', 1000, "the 'end' position to be committed")
      await a.close()
      await fill('t', 0, 2, 'later')
      const b = twain.consumer<string>('t', { group: 'g', from: 'start', ...FAST })
      const got = await pollN(b, 2)
      expect(got.map((m) => [m.partition, m.offset, m.value])).toEqual([
        [0, 5, 'later0'],
        [0, 6, 'later1'],
      ])
      await sleep(200) // nothing before the commit arrives within 200 ms
      expect(b.pollMany(100)).toEqual([])
      got.forEach((m) => m.ack())
      await b.close()
    })

    it("from: 'end' does not override an existing commit of the group", async () => {
      await twain.createTopic('t')
      await fill('t', 0, 6)
      await twain.resetGroup('g', 't', { 0: 2 })
      const c = twain.consumer<string>('t', { group: 'g', from: 'end', ...FAST })
      const ms = await pollN(c, 4)
      expect(ms.map((m) => m.offset)).toEqual([2, 3, 4, 5])
      ms.forEach((m) => m.ack())
      await c.close()
    })

    it('a consumer of a topic that does not exist fails its iteration with TopicNotFoundError', async () => {
      const c = twain.consumer('missing', { group: 'g', ...FAST })
      await expect(iterN(c, 1)).rejects.toBeInstanceOf(TopicNotFoundError)
      await c.close()
    })
  })

  describe('an iteration is a view of the membership', () => {
    it('break out of for await, then a new for await continues after the last delivered message', async () => {
      await twain.createTopic('t')
      await fill('t', 0, 10)
      const c = twain.consumer<string>('t', { group: 'g', ...FAST })
      const first = await iterN(c, 3, (m) => m.ack())
      expect(first.map((m) => m.offset)).toEqual([0, 1, 2])
      // still a member 300 ms later (several heartbeats)
      await sleep(300)
      expect(c.assignments()).toHaveLength(1)
      expect((await twain.describeGroup('g')).members).toHaveLength(1)
      const second = await iterN(c, 7, (m) => m.ack())
      expect(second.map((m) => m.offset)).toEqual([3, 4, 5, 6, 7, 8, 9])
      expect(second.every((m) => m.deliveryCount === 1)).toBe(true)
      await c.commit()
      expect(await committed('g', 't')).toEqual([10])
      await c.close()
    })

    it('a message delivered by an ended view can still be acked and is committed', async () => {
      await twain.createTopic('t')
      await fill('t', 0, 4)
      const c = twain.consumer<string>('t', { group: 'g', ...FAST, commitIntervalMs: 60_000 })
      const first = await iterN(c, 2) // not acked inside the loop
      first.forEach((m) => m.ack())
      await c.commit()
      expect(await committed('g', 't')).toEqual([2])
      const next = c.poll()
      expect(next?.offset).toBe(2)
      next?.ack()
      c.pollMany(10).forEach((m) => m.ack())
      await c.close()
    })

    it('RxJS from(consumer).pipe(take(3)) ends only that view; the next view continues', async () => {
      await twain.createTopic('t')
      await fill('t', 0, 8)
      const c = twain.consumer<string>('t', { group: 'g', ...FAST })
      const first = await firstValueFrom(rxFrom(c).pipe(rxTake(3), rxToArray()))
      expect(first.map((m) => m.offset)).toEqual([0, 1, 2])
      first.forEach((m) => m.ack())
      const second = await firstValueFrom(c.asObservable().pipe(rxTake(2), rxToArray()))
      expect(second.map((m) => m.offset)).toEqual([3, 4])
      second.forEach((m) => m.ack())
      const third = await iterN(c, 3, (m) => m.ack())
      expect(third.map((m) => m.offset)).toEqual([5, 6, 7])
      expect([...first, ...second, ...third].every((m) => m.deliveryCount === 1)).toBe(true)
      await c.commit()
      expect(await committed('g', 't')).toEqual([8])
      await c.close()
    })

    it('a message delivered by an ended view can be nacked and the next view gets it again', async () => {
      await twain.createTopic('t')
      await fill('t', 0, 3)
      const c = twain.consumer<string>('t', { group: 'g', ...FAST })
      const [m0] = await iterN(c, 1)
      m0!.nack()
      const next = await iterN(c, 3, (m) => m.ack())
      expect(next.map((m) => [m.offset, m.deliveryCount])).toContainEqual([0, 2])
      expect(next.map((m) => m.offset).sort()).toEqual([0, 1, 2])
      await c.commit()
      expect(await committed('g', 't')).toEqual([3])
      await c.close()
    })

    it('poll() after an ended view continues where the view stopped', async () => {
      await twain.createTopic('t')
      await fill('t', 0, 5)
      const c = twain.consumer<string>('t', { group: 'g', ...FAST })
      await iterN(c, 2, (m) => m.ack())
      const rest = await pollN(c, 3)
      expect(rest.map((m) => m.offset)).toEqual([2, 3, 4])
      rest.forEach((m) => m.ack())
      await c.close()
    })
  })
})
