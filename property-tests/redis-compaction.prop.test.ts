// The Redis compaction script (scripts/compact-6.lua) against a model, on a real redis-server: any
// sequence of puts, deletes (null values, tombstones), trims and compaction steps of any size, with
// tombstones kept forever or not at all. After every step: every record still stored is the one
// sent at its offset, the latest record of every key that is neither a tombstone nor trimmed is there, and the end
// offset only grows. After a whole pass: exactly the latest record of every key is stored (tombstones
// included when kept, none when not), and the pass's counts are the stored records and bytes.
import fc from 'fast-check'
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RedisBackend } from '../src/backends/redis/redis-backend.js'
import { backendOf } from '../src/facade/twain.js'
import { open, type Twain } from '../src/index.js'
import { topicMeta } from '../test/contract/fixture.js'
import { RedisServer } from '../test/helpers/redis-server.js'

type Op = { put: string; value: string | null } | { step: number } | { trim: number }

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({ put: fc.constantFrom('a', 'b', 'c', 'd', ''), value: fc.string({ maxLength: 6 }) }),
  },
  { weight: 1, arbitrary: fc.record({ put: fc.constantFrom('a', 'b', 'c', 'd', ''), value: fc.constant(null) }) },
  { weight: 2, arbitrary: fc.record({ step: fc.integer({ min: 1, max: 5 }) }) },
  { weight: 1, arbitrary: fc.record({ trim: fc.nat({ max: 4 }) }) },
)

describe('Redis compaction script (property, real redis-server)', () => {
  let server: RedisServer
  let twain: Twain
  beforeAll(async () => {
    server = await RedisServer.start()
    twain = await open(server.url, { prefix: `pc${randomBytes(4).toString('hex')}:` })
  })
  afterAll(async () => {
    await twain?.close()
    await server?.destroy()
  })

  it('keeps the latest record of every key, removes tombstones as configured, never moves an offset', async () => {
    const store = backendOf(twain) as RedisBackend
    let n = 0
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { maxLength: 40 }), fc.boolean(), async (ops, keepTombstones) => {
        const topic = `t${n++}`
        await store.createTopic(
          topicMeta(topic, { keyType: 'string', compact: true, tombstoneRetentionMs: keepTombstones ? 3_600_000 : 0 }),
        )
        const keys = ['stream', 'end', 'start', 'compactIndex', 'compactTombstones', 'compactState'] as const
        const [k1, k2, k3, k4, k5, k6] = keys.map((k) => store.keys[k](topic, 0)) as [
          string,
          string,
          string,
          string,
          string,
          string,
        ]
        const step = (most: number) =>
          store.scripts.call('compact', [k1, k2, k3, k4, k5, k6] as never, [most, keepTombstones ? 3_600_000 : 0])
        const sent: Array<{ key: string; value: string | null }> = []
        const latest = new Map<string, number>()
        const producer = twain.producer<string | null>(topic)
        let end = 0
        let start = 0
        const stored = async (): Promise<Map<number, string | null>> => {
          const out = new Map<number, string | null>()
          for await (const m of twain.history<string | null>(topic)) {
            expect({ key: m.key, value: m.value }).toEqual(sent[m.offset])
            out.set(m.offset, m.value)
          }
          return out
        }
        for (const op of ops) {
          if ('put' in op) {
            const r = await producer.send(op.put, op.value)
            expect(r.offset).toBe(sent.length)
            sent.push({ key: op.put, value: op.value })
            latest.set(op.put, r.offset)
          } else if ('trim' in op) {
            start = Math.min(sent.length, start + op.trim)
            await store.trimBefore(topic, 0, start)
          } else {
            await step(op.step)
            const now = await stored()
            for (const [, offset] of latest)
              if (offset >= start && sent[offset]?.value !== null) expect(now.has(offset)).toBe(true)
          }
          const e = (await store.offsets(topic))[0]?.end as number
          expect(e).toBeGreaterThanOrEqual(end)
          end = e
        }
        // A whole pass: steps until one says it ended.
        let last: unknown[] = []
        for (let i = 0; i < 1000 && Number(last[0]) !== 1; i++) last = (await step(3)) as unknown[]
        expect(Number(last[0])).toBe(1)
        const now = await stored()
        const expected = [...latest.values()]
          .filter((o) => o >= start && (keepTombstones || sent[o]?.value !== null))
          .sort((a, b) => a - b)
        expect([...now.keys()]).toEqual(expected)
        const stats = await store.lastCompaction(topic)
        expect(stats?.after.records).toBe(expected.length)
        expect(stats?.after.records).toBe(Number(last[1]))
        const entries = await store.client.xrangeBuffer(k1, '-', '+')
        expect(stats?.after.bytes).toBe(entries.reduce((s, [, f]) => s + (f[1] as Buffer).length, 0))
        expect(stats?.before.records).toBeGreaterThanOrEqual(expected.length)
      }),
      { numRuns: 60 },
    )
  }, 120_000)
})
