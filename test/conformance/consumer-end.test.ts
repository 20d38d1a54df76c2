// Conformance: a consumer group member with `from: 'end'` takes the end as it was when `consumer()`
// was called, as `tail()` does: "start a consumer, then produce" delivers the first message, also
// when it is sent before the member owns its partitions. Before, a partitioned member took the
// end when it first owned the partition, and a shared member created its group at '$' when it
// joined, so that message was skipped for the group.
import { describe, expect, it } from 'vitest'
import type { GroupMessage } from '../../src/index.js'
import { within } from '../helpers/wait.js'
import { backends, perTest } from './backends.js'

describe.each(backends())("consumer from: 'end' on $name", (kind) => {
  kind.hooks()
  const ctx = perTest(kind)

  const modes = kind.caps.shared ? (['partitioned', 'shared'] as const) : (['partitioned'] as const)
  it.each(modes)(
    "%s: delivers a message sent right after consumer() returned, and none sent before; 'once' listens once",
    async (mode) => {
      await ctx.twain.createTopic('t', { partitions: 2 })
      const p = ctx.twain.producer<string>('t')
      await p.sendBatch([
        { key: 1, value: 'old-0', partition: 0 },
        { key: 2, value: 'old-1', partition: 1 },
      ])
      const c = ctx.twain.consumer<string>('t', { group: 'g', from: 'end', mode })
      const assigned: unknown[] = []
      c.once('assigned', (tps) => assigned.push(tps))
      await p.sendBatch([
        { key: 1, value: 'new-0', partition: 0 },
        { key: 2, value: 'new-1', partition: 1 },
      ])
      const got: GroupMessage<string>[] = []
      try {
        await within(
          (async () => {
            for await (const m of c) {
              got.push(m)
              m.ack()
              if (got.length === 2) break
            }
          })(),
          15_000,
          'the two messages sent after consumer()',
        )
        expect(got.map((m) => m.value).sort()).toEqual(['new-0', 'new-1'])
        expect(assigned).toHaveLength(1)
        await c.commit()
      } finally {
        await c.close()
      }
      const d = await ctx.twain.describeGroup('g')
      expect(d.topics.map((t) => t.committed)).toEqual([2, 2])
    },
  )
})
