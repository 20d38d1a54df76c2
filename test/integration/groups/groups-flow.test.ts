// Consumer groups in one process: flow control (maxInFlight, no starvation, poll() never waits). Public API only (DESIGN §3.6); shared fixtures in groups-fixtures.ts.
import { describe, expect, it } from 'vitest'
import { sleep, until } from '../../helpers/wait.js'
import { FAST, fill, pollN, twain, useGroupStore, waitAssigned } from './groups-fixtures.js'
import { everyStore } from '../../conformance/backends.js'

describe.each(everyStore())('consumer groups on $name', (kind) => {
  useGroupStore(kind)

  describe('flow control', () => {
    it('maxInFlight bounds the delivered-but-unacked messages', async () => {
      await twain.createTopic('t', { partitions: 3 })
      for (let p = 0; p < 3; p++) await fill('t', p, 30)
      const c = twain.consumer<string>('t', { group: 'g', ...FAST, maxInFlight: 5 })
      await waitAssigned(c, 3)
      const first = await pollN(c, 5)
      await sleep(300) // no sixth message within 300 ms
      expect(c.pollMany(100)).toEqual([])
      first[0]!.ack()
      first[1]!.ack()
      const next = await pollN(c, 2)
      await sleep(200) // no more than the two freed slots within 200 ms
      expect(c.pollMany(100)).toEqual([])
      // drain everything 5 at a time: never more than 5 un-acked
      const seen = new Set([...first, ...next].map((m) => `${m.partition}@${m.offset}`))
      let open = [...first.slice(2), ...next]
      while (seen.size < 90) {
        expect(open.length).toBeLessThanOrEqual(5)
        open.forEach((m) => m.ack())
        open = []
        await until(
          () => {
            open.push(...c.pollMany(100))
            return open.length > 0 || seen.size >= 90
          },
          3000,
          'more messages',
        )
        expect(open.length).toBeLessThanOrEqual(5)
        for (const m of open) seen.add(`${m.partition}@${m.offset}`)
      }
      expect(seen.size).toBe(90)
      open.forEach((m) => m.ack())
      await c.close()
    })

    for (const busy of [0, 1]) {
      it(`a small maxInFlight does not starve a partition behind a busy one (busy partition ${busy})`, async () => {
        const quiet = 1 - busy
        await twain.createTopic('t', { partitions: 2 })
        await twain
          .producer<string>('t')
          .sendBatch(Array.from({ length: 2000 }, (_, i) => ({ key: i, value: `busy${i}`, partition: busy })))
        await fill('t', quiet, 5)
        const c = twain.consumer<string>('t', { group: 'g', ...FAST, maxInFlight: 10 })
        const order: number[] = []
        for await (const m of c) {
          order.push(m.partition)
          m.ack()
          if (order.filter((p) => p === quiet).length === 5 || order.length === 2005) break
        }
        // every partition gets a turn: the quiet one's 5 messages come early, not after the 2000 others
        expect(order.lastIndexOf(quiet)).toBeLessThan(200)
        c.pollMany(3000).forEach((m) => m.ack())
        await c.close()
      })
    }

    it('poll() and pollMany() never wait', async () => {
      await twain.createTopic('t')
      const c = twain.consumer<string>('t', { group: 'g', ...FAST })
      const r = c.poll()
      expect(r).toBeUndefined()
      expect(c.pollMany(10)).toEqual([])
      await waitAssigned(c, 1)
      expect(c.poll()).toBeUndefined()
      await fill('t', 0, 3)
      const got = await pollN(c, 3)
      expect(got.map((m) => m.value)).toEqual(['p0-0', 'p0-1', 'p0-2'])
      got.forEach((m) => m.ack())
      await c.close()
    })
  })
})
