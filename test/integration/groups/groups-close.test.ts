// Consumer groups in one process: close(), drains and leaving the membership. Public API only (DESIGN §3.6); shared fixtures in groups-fixtures.ts.
import { describe, expect, it } from 'vitest'
import { AbortError } from '../../../src/index.js'
import { PROMPT_MS, sleep, until } from '../../helpers/wait.js'
import {
  FAST,
  committed,
  fill,
  iterN,
  openOther,
  pollN,
  twain,
  useGroupStore,
  waitAssigned,
} from './groups-fixtures.js'
import { everyStore } from '../../conformance/backends.js'
import { backendOf } from '../../../src/facade/twain.js'

describe.each(everyStore())('consumer groups on $name', (kind) => {
  useGroupStore(kind)

  describe('close and the membership', () => {
    it('close() drains: a message acked after close() began is committed, and the member leaves', async () => {
      await twain.createTopic('t')
      await fill('t', 0, 3)
      const c = twain.consumer<string>('t', { group: 'g', ...FAST, commitIntervalMs: 60_000 })
      const ms = await pollN(c, 3)
      ms[0]!.ack()
      const closing = c.close()
      await sleep(150) // close() is under way: it waits for the acks instead of finishing
      ms[1]!.ack()
      ms[2]!.ack()
      await closing
      expect(await committed('g', 't')).toEqual([3])
      expect((await twain.describeGroup('g')).members).toEqual([])
    })

    it('close() keeps the membership alive while it drains (an ack later than the session timeout, within the drain timeout, is committed)', async () => {
      await twain.createTopic('t')
      await fill('t', 0, 2)
      const opts = {
        group: 'g',
        sessionTimeoutMs: 1000,
        heartbeatIntervalMs: 100,
        commitIntervalMs: 60_000,
        drainTimeoutMs: 4000,
      }
      const a = twain.consumer<string>('t', opts)
      const ms = await pollN(a, 2)
      const b = twain.consumer<string>('t', { ...opts, commitIntervalMs: 100 }) // another live member
      const closing = a.close()
      await sleep(1500) // time is the subject: longer than the session timeout (1 s)
      ms.forEach((m) => m.ack())
      await closing
      expect(await committed('g', 't')).toEqual([2])
      await sleep(300) // nothing arrives within 300 ms
      expect(b.pollMany(10)).toEqual([]) // b does not get them again
      await b.close()
    })

    it('close() gives up on un-acked messages after the drain timeout and commits only what was acked', async () => {
      await twain.createTopic('t')
      await fill('t', 0, 3)
      const c = twain.consumer<string>('t', { group: 'g', ...FAST, drainTimeoutMs: 300 })
      const ms = await pollN(c, 3)
      ms[0]!.ack()
      const t0 = Date.now()
      await c.close()
      expect(Date.now() - t0).toBeLessThan(PROMPT_MS)
      expect(await committed('g', 't')).toEqual([1])
    })

    it('close() waits for a dead-letter write under way and commits the termed message', async () => {
      await twain.createTopic('t')
      await fill('t', 0, 2)
      const c = twain.consumer<string>('t', { group: 'g', ...FAST, deadLetter: 'dlq', commitIntervalMs: 60_000 })
      const [m0, m1] = await pollN(c, 2)
      m0!.ack()
      m1!.term('at close')
      await c.close()
      // twainmq-v1 stores no headers: the dead letter is refused (an 'error'), so offset 1 stays uncommitted
      expect(await twain.length('dlq')).toBe(kind.caps.headers ? 1 : 0)
      expect(await committed('g', 't')).toEqual([kind.caps.headers ? 2 : 1])
    })

    it('await using a consumer closes it (leaves the group) at the end of the block', async () => {
      await twain.createTopic('t')
      await fill('t', 0, 1)
      {
        await using c = twain.consumer<string>('t', { group: 'g', ...FAST })
        ;(await pollN(c, 1))[0]!.ack()
        expect((await twain.describeGroup('g')).members).toHaveLength(1)
      }
      const d = await twain.describeGroup('g')
      expect(d.members).toEqual([])
      expect(d.topics[0]!.committed).toBe(1)
    })

    it('a change of the group announced while the member leaves does not make it rejoin (no heartbeat after the leave)', async () => {
      await twain.createTopic('t', { partitions: 2 })
      // The store's coordinator, instrumented: the group's change callback is fired right after the
      // leave is written (another member's step announcing a change then), and heartbeats started
      // after it are counted (one re-added the leaving member: describeGroup listed it after close()).
      const groups = backendOf(twain).groups
      let announce: (() => void) | undefined
      let left = false
      const late: Array<Promise<unknown>> = []
      const watch = groups.watchGroup.bind(groups)
      const heartbeat = groups.groupHeartbeat.bind(groups)
      const leave = groups.groupLeave.bind(groups)
      groups.watchGroup = (g, onChange, persistent) => ((announce = onChange), watch(g, onChange, persistent))
      groups.groupHeartbeat = (...a) => {
        const p = heartbeat(...a)
        if (left) late.push(p.catch(() => undefined))
        return p
      }
      groups.groupLeave = async (...a) => {
        await leave(...a)
        left = true
        announce?.()
      }
      const c = twain.consumer('t', { group: 'g', ...FAST })
      await waitAssigned(c, 2)
      await c.close()
      await Promise.all(late)
      expect({ lateHeartbeats: late.length, members: (await twain.describeGroup('g')).members }).toEqual({
        lateHeartbeats: 0,
        members: [],
      })
    })

    it('close() is idempotent and ends every open view quietly', async () => {
      await twain.createTopic('t')
      const c = twain.consumer<string>('t', { group: 'g', ...FAST })
      const view = (async () => {
        const got = []
        for await (const m of c) got.push(m)
        return got
      })()
      await waitAssigned(c, 1)
      await Promise.all([c.close(), c.close()])
      await c.close()
      expect(await view).toEqual([])
    })

    it('twain.close() closes its consumers: views end, the members leave the group', async () => {
      await twain.createTopic('t')
      await fill('t', 0, 2)
      const other = await openOther()
      try {
        const c = other.consumer<string>('t', { group: 'g', ...FAST, commitIntervalMs: 60_000 })
        const got: number[] = []
        const view = (async () => {
          for await (const m of c) {
            got.push(m.offset)
            m.ack()
          }
          return got
        })()
        await until(() => got.length === 2, 3000, 'both messages')
        await other.close()
        expect(await view).toEqual([0, 1])
        const d = await twain.describeGroup('g')
        expect(d.members).toEqual([])
        expect(d.topics[0]!.committed).toBe(2)
      } finally {
        await other.close()
      }
    })

    it("the consumer's signal leaves the group; a view then ends with AbortError", async () => {
      await twain.createTopic('t')
      const ctrl = new AbortController()
      const c = twain.consumer('t', { group: 'g', ...FAST, signal: ctrl.signal })
      await waitAssigned(c, 1)
      const view = iterN(c, 1).then(
        (v) => ({ ok: true as const, v }),
        (e: unknown) => ({ ok: false as const, e }),
      )
      setTimeout(() => ctrl.abort(), 50)
      const outcome = await view
      await until(async () => (await twain.describeGroup('g')).members.length === 0, 3000, 'the member to leave')
      expect(c.assignments()).toEqual([])
      // MessageStream contract (§3.5): aborting the signal ends a for await by throwing AbortError
      expect(outcome.ok ? 'ended quietly' : outcome.e).toBeInstanceOf(AbortError)
    })
  })
})
