// `maxDeliveries` on a processor whose message goes back by a rewind of its partition: a stateful
// processor's `nack()` and an output that fails (its message is not acked but delivered again)
// read the partition again from its first message not acked, as new message objects. Their
// deliveries count on across the rewind, so a message that fails every time is termed (to the
// dead-letter topic, once) after `maxDeliveries`, as a consumer's nacked message is; before, each
// rewind counted from 1 again and the message came back forever.
import { describe, expect, it } from 'vitest'
import type { Processor, ProcessorOptions } from '../../../src/index.js'
import { backends } from '../../conformance/backends.js'
import { until } from '../../helpers/wait.js'
import { fill, twain, untilCommitted, useGroupStore } from '../groups/groups-fixtures.js'

const opts = (o: Partial<ProcessorOptions> = {}): ProcessorOptions => ({
  group: 'etl',
  sessionTimeoutMs: 2000,
  heartbeatIntervalMs: 200,
  commitIntervalMs: 50,
  deadLetter: 'dlq',
  ...o,
})

/** Poll `p`, handing each message to `handle`, until the dead-letter topic holds one record: offset 0's delivery counts. */
async function untilDeadLettered<V>(
  p: Processor<V>,
  handle: (m: ReturnType<Processor<V>['pollMany']>[number]) => void,
) {
  const seen: number[] = []
  await until(
    async () => {
      for (const m of p.pollMany(10)) {
        if (m.offset === 0) seen.push(m.deliveryCount)
        handle(m)
      }
      if (seen.length > 20)
        throw new Error(`no dead letter after ${seen.length} deliveries (${seen.slice(0, 6).join(',')}, …)`)
      return (await twain.length('dlq')) === 1
    },
    15_000,
    'the dead letter',
  )
  return seen
}

const kinds = backends().filter((k) => k.name === 'file' || k.name === 'redis')

describe.each(kinds)('maxDeliveries across rewinds on $name', (kind) => {
  useGroupStore(kind)

  it("a stateful processor's message nacked at every delivery is termed after maxDeliveries", async () => {
    await twain.createTopic('in', { partitions: 1 })
    await fill('in', 0, 2)
    const p = twain.processor<string>('in', opts({ state: 'st', maxDeliveries: 3 }))
    const seen = await untilDeadLettered(p, (m) => {
      m.state.set(`seen-${m.offset}`, m.deliveryCount)
      if (m.offset === 0) m.nack()
      else m.ack()
    })
    expect(seen).toEqual([1, 2, 3])
    await untilCommitted(p, 'etl', 'in', 2, 'the commit past both')
    await p.close()
    expect(await twain.length('dlq')).toBe(1)
  })

  it('a message whose output fails at every delivery is termed after maxDeliveries', async () => {
    await twain.createTopic('in', { partitions: 1 })
    await twain.createTopic('out', { keyType: 'u8' })
    await fill('in', 0, 1)
    const p = twain.processor<string>('in', opts({ maxDeliveries: 2 }))
    p.on('error', () => undefined) // the refused output, reported at each rewind
    const seen = await untilDeadLettered(p, (m) => {
      void m.send('out', 'not-a-u8-key', m.value) // refused: the message is delivered again
      m.ack()
    })
    expect(seen).toEqual([1, 2])
    await untilCommitted(p, 'etl', 'in', 1)
    await p.close()
    expect(await twain.length('out')).toBe(0)
  })
})
