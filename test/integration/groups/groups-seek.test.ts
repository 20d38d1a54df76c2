// Consumer groups in one process: seek() and assignments(). Public API only (DESIGN §3.6); shared fixtures in groups-fixtures.ts.
import { describe, expect, it } from 'vitest'
import { InvalidArgumentError } from '../../../src/index.js'
import { until } from '../../helpers/wait.js'
import { FAST, committed, fill, pollN, sortTp, twain, useGroupStore, waitAssigned } from './groups-fixtures.js'
import { everyStore } from '../../conformance/backends.js'

describe.each(everyStore())('consumer groups on $name', (kind) => {
  useGroupStore(kind)

  describe('seek and assignments', () => {
    it('seek() continues a partition from the given offset', async () => {
      await twain.createTopic('t', { partitions: 2 })
      await fill('t', 0, 10)
      const c = twain.consumer<string>('t', { group: 'g', ...FAST, commitIntervalMs: 60_000 })
      const ms = await pollN(c, 10)
      ms.forEach((m) => m.ack())
      await c.commit()
      expect(await committed('g', 't')).toEqual([10, 0])
      c.seek('t', 0, 3)
      const again = await pollN(c, 7)
      expect(again.map((m) => m.offset)).toEqual([3, 4, 5, 6, 7, 8, 9])
      again.slice(0, 2).forEach((m) => m.ack())
      await c.commit()
      expect(await committed('g', 't')).toEqual([5, 0])
      again.forEach((m) => m.ack())
      await c.close()
    })

    it('seek() forward skips messages, and acks of messages from before the seek are ignored', async () => {
      await twain.createTopic('t')
      await fill('t', 0, 10)
      const c = twain.consumer<string>('t', { group: 'g', ...FAST, commitIntervalMs: 60_000 })
      const ms = await pollN(c, 2)
      c.seek('t', 0, 8)
      ms.forEach((m) => m.ack())
      const after = await pollN(c, 2)
      expect(after.map((m) => m.offset)).toEqual([8, 9])
      await c.commit()
      expect(await committed('g', 't')).toEqual([8])
      after.forEach((m) => m.ack())
      await c.close()
      expect(await committed('g', 't')).toEqual([10])
    })

    it("seek() while a fetch is under way raises no 'error'", async () => {
      await twain.createTopic('t')
      await twain.producer<string>('t').sendBatch(Array.from({ length: 2000 }, (_, i) => ({ key: 1, value: `v${i}` })))
      const c = twain.consumer<string>('t', { group: 'g', ...FAST, drainTimeoutMs: 200 })
      const errors: Error[] = []
      c.on('error', (e) => errors.push(e))
      await waitAssigned(c, 1)
      for (let i = 0; i < 300; i++) {
        c.seek('t', 0, (i * 37) % 2000)
        await new Promise((r) => setImmediate(r))
        for (const m of c.pollMany(50)) m.ack()
      }
      expect(errors.map((e) => e.message)).toEqual([])
      await c.close()
    })

    it('a seek() while the fetch of an earlier seek is under way is not skipped past (nothing is lost)', async () => {
      await twain.createTopic('t')
      await twain.producer<string>('t').sendBatch(Array.from({ length: 2000 }, (_, i) => ({ key: 1, value: `v${i}` })))
      const c = twain.consumer<string>('t', { group: 'g', ...FAST, maxInFlight: 5, commitIntervalMs: 60_000 })
      await waitAssigned(c, 1)
      ;(await pollN(c, 5)).forEach((m) => m.ack())
      c.seek('t', 0, 0) // the fetch loop starts re-opening the partition at 0…
      await Promise.resolve()
      c.seek('t', 0, 1990) // …and the application changes its mind
      const got: number[] = []
      await until(
        () => {
          for (const m of c.pollMany(100)) {
            got.push(m.offset)
            m.ack()
          }
          return got.includes(1999)
        },
        3000,
        'offset 1999',
      )
      expect(got).toEqual(Array.from({ length: 10 }, (_, i) => 1990 + i))
      await c.commit()
      expect(await committed('g', 't')).toEqual([2000])
      await c.close()
    })

    it('seek() rejects a topic the consumer does not read and a negative offset', async () => {
      await twain.createTopic('t')
      const c = twain.consumer('t', { group: 'g', ...FAST })
      expect(() => c.seek('other', 0, 1)).toThrow(InvalidArgumentError)
      expect(() => c.seek('t', 0, -1)).toThrow(InvalidArgumentError)
      await c.close()
    })

    it('assignments() matches what describeGroup reports for the member', async () => {
      await twain.createTopic('a', { partitions: 2 })
      await twain.createTopic('b', { partitions: 3 })
      const c = twain.consumer(['a', 'b'], { group: 'g', ...FAST })
      await waitAssigned(c, 5)
      const d = await twain.describeGroup('g')
      expect(d.members).toHaveLength(1)
      expect(sortTp(d.members[0]!.assignments)).toEqual(sortTp(c.assignments()))
      expect(sortTp(c.assignments())).toEqual(['a/0', 'a/1', 'b/0', 'b/1', 'b/2'])
      expect(d.topics.map((t) => `${t.topic}/${t.partition}`)).toEqual(['a/0', 'a/1', 'b/0', 'b/1', 'b/2'])
      await c.close()
    })
  })
})
