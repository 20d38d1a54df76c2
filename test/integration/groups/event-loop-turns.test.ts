// A member's iteration hands out buffered messages in microtasks: a `for await` loop whose body
// does not wait for I/O (a backlog read from the buffer, a message nacked again and again) would
// never let the event loop turn, so no timer ran (the member's heartbeats, the application's own)
// and no signal handler or I/O either: a member nacking a poison message spun until its session
// lapsed, a zombie deaf to a SIGTERM handler. Every view now lets the event loop turn once it has
// handed out messages for a while without one, on every group mode and backend.
//
// Each case starts a timer of 0 ms at its first delivery, then loops until the timer has run; the
// loop gives up after `GUARD_MS` of looping (on the code before, the timer never ran, and a test
// timeout could not fire either: it is a timer too). A loaded machine only makes the loop slower:
// the turn comes by time.
import { describe, expect, it } from 'vitest'
import type { GroupMessage, MessageStream } from '../../../src/index.js'
import { backends } from '../../conformance/backends.js'
import { fill, twain, useGroupStore } from './groups-fixtures.js'

const GUARD_MS = 5000

/**
 * Deliveries of `stream`'s messages (each handled by `handle`) until a 0 ms timer, set at the first
 * delivery (the loop busy by then: reading, restoring and joining are done), has run.
 */
async function deliveriesUntilTimer<M extends GroupMessage<unknown>>(
  stream: MessageStream<M>,
  handle: (m: M) => void,
): Promise<{ deliveries: number; timerRan: boolean }> {
  let timerRan = false
  let t: NodeJS.Timeout | undefined
  let deliveries = 0
  let began = 0
  for await (const m of stream) {
    if (deliveries++ === 0) {
      t = setTimeout(() => (timerRan = true), 0)
      began = performance.now()
    }
    handle(m)
    if (timerRan || performance.now() - began >= GUARD_MS) break
  }
  clearTimeout(t)
  return { deliveries, timerRan }
}

describe.each(backends())('the event loop turns under a busy iteration on $name', (kind) => {
  useGroupStore(kind)

  it('a consumer nacking one message again and again', async () => {
    await twain.createTopic('in', { partitions: 1 })
    await fill('in', 0, 1)
    const c = twain.consumer<string>('in', { group: 'g', from: 'start' })
    const r = await deliveriesUntilTimer(c, (m) => m.nack())
    await c.close()
    expect(r.timerRan, `${r.deliveries} deliveries without a turn of the event loop`).toBe(true)
  })

  it('a stateful processor nacking one message again and again (each nack rewinds its partition)', async () => {
    await twain.createTopic('in', { partitions: 1 })
    await fill('in', 0, 1)
    const p = twain.processor<string>('in', { group: 'g', from: 'start', state: 'st' })
    const r = await deliveriesUntilTimer(p, (m) => {
      m.state.set('n', 1)
      m.nack()
    })
    await p.close()
    expect(r.timerRan, `${r.deliveries} deliveries without a turn of the event loop`).toBe(true)
  })
})

// Shared (competing-consumer) groups live on Redis only.
describe.each(backends().filter((k) => k.name === 'redis' || k.name === 'cluster'))(
  'the event loop turns under a busy shared iteration on $name',
  (kind) => {
    useGroupStore(kind)

    it('a shared consumer nacking one message again and again', async () => {
      await twain.createTopic('in', { partitions: 1 })
      await fill('in', 0, 1)
      const c = twain.consumer<string>('in', { group: 'g', from: 'start', mode: 'shared' })
      const r = await deliveriesUntilTimer(c, (m) => m.nack())
      await c.close()
      expect(r.timerRan, `${r.deliveries} deliveries without a turn of the event loop`).toBe(true)
    })
  },
)
