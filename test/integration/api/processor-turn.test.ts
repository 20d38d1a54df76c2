// A processor's iteration over a full buffer lets the event loop turn once it has handed out
// 512 messages in one go with at least 512 outputs queued (decision 233): its outputs are written
// while it goes on, not once the buffer has run dry. A consumer's iteration does not wait for turns.
import { describe, expect, it } from 'vitest'
import type { MessageStream } from '../../../src/index.js'
import { backends } from '../../conformance/backends.js'
import { fill, twain, useGroupStore } from '../groups/groups-fixtures.js'

const INPUTS = 4000

/** Counts the event loop's turns: a `setImmediate` that schedules itself until stopped. */
function turnCounter(): { readonly turns: number; stop(): void } {
  let turns = 0
  let on = true
  const tick = (): void => {
    turns++
    if (on) setImmediate(tick)
  }
  setImmediate(tick)
  return {
    get turns() {
      return turns
    },
    stop: () => void (on = false),
  }
}

/**
 * Iterate `stream` over `INPUTS` messages; `each` is called with each one. Returns the longest run
 * of messages handed out with no turn of the event loop between them.
 */
async function longestRun<M>(stream: MessageStream<M>, each: (m: M) => void): Promise<number> {
  const counter = turnCounter()
  let seen = 0
  let run = 0
  let longest = 0
  let lastTurn = -1
  try {
    for await (const m of stream) {
      if (counter.turns !== lastTurn) {
        lastTurn = counter.turns
        run = 0
      }
      longest = Math.max(longest, ++run)
      each(m)
      if (++seen === INPUTS) break
    }
  } finally {
    counter.stop()
  }
  return longest
}

const kinds = backends().filter((k) => k.name === 'file')

describe.each(kinds)('a processor lets the event loop turn on $name', (kind) => {
  useGroupStore(kind)

  async function setup(): Promise<void> {
    await twain.createTopic('in', { partitions: 4 })
    await twain.createTopic('out', { partitions: 4 })
    for (let p = 0; p < 4; p++) await fill('in', p, INPUTS / 4)
  }

  it('after 512 messages handed out in one go with their outputs queued; the outputs are written meanwhile', async () => {
    await setup()
    const proc = twain.processor<string>('in', { group: 'g', sessionTimeoutMs: 10_000 })
    let stored = 0
    let storedBeforeLast = -1
    const longest = await longestRun(proc, (m) => {
      void m.send('out', m.key, m.value).then(() => void stored++)
      m.ack()
      storedBeforeLast = stored
    })
    await proc.commit()
    await proc.close()
    // A run is cut at the first delivery (at most 256 messages) past 512: at most 767 in one go.
    expect(longest).toBeLessThan(768)
    // Outputs were written while messages were still being handed out.
    expect(storedBeforeLast).toBeGreaterThan(0)
    expect(await twain.length('out')).toBe(INPUTS)
  })

  it('not for a consumer: its iteration hands out what its buffer holds in one go', async () => {
    await setup()
    const consumer = twain.consumer<string>('in', { group: 'g', sessionTimeoutMs: 10_000, maxInFlight: INPUTS })
    const longest = await longestRun(consumer, (m) => m.ack())
    await consumer.close()
    // Reads fill the buffer with more than 767 messages at a time, and nothing cuts their run.
    expect(longest).toBeGreaterThan(767)
  })
})
