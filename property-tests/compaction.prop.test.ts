import fc from 'fast-check'
import { afterAll, describe, expect, it } from 'vitest'
import type { TopicMeta } from '../src/backends/backend.js'
import { checkPartition } from '../src/backends/file/check.js'
import { FileBackend } from '../src/backends/file/file-backend.js'
import { partitionDir } from '../src/backends/file/layout.js'
import type { Message } from '../src/core/types.js'
import { readAll, records, topicMeta } from '../test/contract/fixture.js'
import { tempDir } from '../test/helpers/tmp.js'

/*
 * File compaction on random logs: puts and deletes (tombstones, some with event times older than
 * the topic's tombstone retention) of a few keys, in batches of one to a few records, over small
 * segments, with passes in between (and the background passes small segments set off). After a
 * pass, what a reader finds from offset 0 is exactly each key's latest record at its offset and
 * with its value (a tombstone too: its retention counts from when it was stored, not from its event
 * time; its expiry is in test/contract/compaction.test.ts), offsets only grow, new sends continue
 * at the end, and `check` finds no damage.
 */

const RETENTION_MS = 60_000
const meta: TopicMeta = topicMeta('t', { compact: true, tombstoneRetentionMs: RETENTION_MS })
const dirs: Array<() => void> = []
afterAll(() => {
  for (const rm of dirs.splice(0)) rm()
})

/** One record: key, value (null: a tombstone), and whether its event time is older than the retention. */
interface Put {
  key: number
  value: string | null
  old: boolean
}
type Step = { batch: Put[] } | { compact: true }

const putArb: fc.Arbitrary<Put> = fc.record({
  key: fc.integer({ min: 0, max: 5 }),
  value: fc.oneof(fc.string({ maxLength: 40 }), fc.constant(null)),
  old: fc.boolean(),
})
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 8, arbitrary: fc.array(putArb, { minLength: 1, maxLength: 4 }).map((batch) => ({ batch })) },
  { weight: 1, arbitrary: fc.constant({ compact: true as const }) },
)

/** What a reader must find after a pass, from the model of every record sent (index = offset); all stored within the retention. */
function expected(sent: ReadonlyArray<Put & { timestamp: number }>): Array<[number, number, unknown]> {
  const latest = new Map<number, number>()
  sent.forEach((p, offset) => latest.set(p.key, offset))
  return [...latest.values()].sort((a, b) => a - b).map((o) => [o, (sent[o] as Put).key, (sent[o] as Put).value])
}

describe('file compaction', () => {
  it('keeps exactly each key’s latest record (tombstones stored within their retention too, whatever their event time); offsets only grow; check finds no damage', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 1, maxLength: 40 }), async (steps) => {
        const t = tempDir('twainmq-prop-compact-')
        dirs.push(t.remove)
        const b = new FileBackend(t.dir, { segmentBytes: 1024 })
        await b.init()
        try {
          await b.createTopic(meta)
          const sent: Array<Put & { timestamp: number }> = []
          let seen: Message[] = []
          for (const step of [...steps, { compact: true as const }]) {
            if ('batch' in step) {
              const now = Date.now()
              const recs = step.batch.map((p) => {
                const timestamp = p.old ? now - 2 * RETENTION_MS : now
                sent.push({ ...p, timestamp })
                return records(meta, [{ key: p.key, value: p.value as string }], timestamp)[0]!
              })
              expect(await b.append('t', 0, recs, 'p')).toBe(sent.length - recs.length)
              continue
            }
            await b.compact('t')
            const left = await readAll(b, 't')
            expect(left.map((m) => [m.offset, m.key, m.value])).toEqual(expected(sent))
            // Whatever was read before, a read now never finds an offset it did not have, or another value at it.
            for (const m of left) {
              const before = seen.find((s) => s.offset === m.offset)
              if (before) expect([before.key, before.value]).toEqual([m.key, m.value])
            }
            seen = left
            expect((await b.offsets('t'))[0]?.end).toBe(sent.length)
          }
          expect(checkPartition(partitionDir(t.dir, 't', 0), 0, 't', true).damage).toEqual([])
        } finally {
          await b.close()
          t.remove()
        }
      }),
      { numRuns: 40 },
    )
  }, 120_000)
})
