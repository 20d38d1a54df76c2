// Conformance: request/response through every reader kind — send one message, wait until it is
// delivered, send the next — over a 4-partition topic, on every backend. A reader that blocks
// without one of the partitions it watches delivers that partition's next record only when its
// blocking read times out (on Redis: 5 s), so the slowest delivery is what this asserts, not a
// percentile. The bound of 1 s is the product's promise for a delivery of a stored record, far
// above a loaded machine's round trip (a few ms) and far below a block time-out.
import { describe, expect, it } from 'vitest'
import type { GroupMessage, Message } from '../../src/index.js'
import { until, within } from '../helpers/wait.js'
import { backends, perTest } from './backends.js'

type ReaderKind = 'tail' | 'partitioned' | 'shared'

/** The partitions the requests go to in turn: every partition first on its own, then again. */
const ROUNDS = [1, 2, 3, 0, 3, 2, 1, 0, 1, 3]
const SLOWEST_MS = 1000

describe.each(backends())('request/response on $name', (kind) => {
  kind.hooks()
  const ctx = perTest(kind)
  const readers: ReaderKind[] = kind.caps.shared ? ['tail', 'partitioned', 'shared'] : ['tail', 'partitioned']

  it.each(readers)(
    "%s from 'end': every request is delivered within 1 s of its send, whichever partition it goes to",
    async (reader) => {
      await ctx.twain.createTopic('t', { partitions: 4 })
      const other = await ctx.open({ clientId: 'requester' })
      const before = await kind.waitingReads()
      let close: () => Promise<void>
      let iterator: AsyncIterator<Message<string> | GroupMessage<string>>
      if (reader === 'tail') {
        const stream = ctx.twain.tail<string>('t', { from: 'end' })
        iterator = stream[Symbol.asyncIterator]()
        close = async () => void (await iterator.return?.())
      } else {
        const c = ctx.twain.consumer<string>('t', {
          group: 'g',
          from: 'end',
          ...(reader === 'shared' ? { mode: 'shared' as const } : {}),
        })
        await c.rebalance()
        iterator = c[Symbol.asyncIterator]()
        close = () => c.close()
      }
      // The first request goes out once the reader waits for data (the race this guards against is
      // a blocking read issued before every watched partition was part of it).
      let next = iterator.next()
      await until(async () => (await kind.waitingReads()) > before, 10_000, 'the reader to wait for data')
      const producer = other.producer<string>('t')
      const took: Array<[number, number]> = []
      try {
        for (const [i, partition] of ROUNDS.entries()) {
          const sent = performance.now()
          await producer.send(i, `req-${i}`, { partition })
          const r = await within(next, 15_000, `request ${i} on partition ${partition}`)
          took.push([partition, Math.round(performance.now() - sent)])
          expect(r.done).toBe(false)
          const m = r.value as Message<string>
          expect([m.partition, m.value]).toEqual([partition, `req-${i}`])
          if ('ack' in m) (m as GroupMessage<string>).ack()
          next = iterator.next()
        }
      } finally {
        await close()
      }
      const slowest = Math.max(...took.map(([, ms]) => ms))
      expect(slowest, `delivery times [partition, ms]: ${JSON.stringify(took)}`).toBeLessThan(SLOWEST_MS)
    },
  )
})
