// The Redis read path end to end against a real redis-server: records of random values (text with
// any Unicode, bytes), headers and producer ids are appended in random batches, some entries are
// deleted by hand (so the packed reply must carry offsets), and random reads from random offsets
// decode exactly what was written at each offset (the `read` script's packed reply and its decoder).
import fc from 'fast-check'
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RedisBackend } from '../src/backends/redis/redis-backend.js'
import { records, topicMeta, type RecordSpec } from '../test/contract/fixture.js'
import { RedisServer } from '../test/helpers/redis-server.js'

const specArb: fc.Arbitrary<RecordSpec> = fc.record({
  value: fc.oneof(fc.string({ unit: 'binary', maxLength: 40 }), fc.uint8Array({ maxLength: 40 }).map((a) => Buffer.from(a))),
  headers: fc.option(fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.string({ unit: 'grapheme', maxLength: 12 }), { maxKeys: 3 }), { nil: undefined }),
})
const batchArb = fc.record({ producer: fc.constantFrom('p1', 'producer-two', 'ü-3'), specs: fc.array(specArb, { minLength: 1, maxLength: 12 }) })

describe('Redis packed reads (property, real redis-server)', () => {
  let server: RedisServer
  beforeAll(async () => {
    server = await RedisServer.start()
  })
  afterAll(async () => {
    await server.destroy()
  })

  it('decode every record at its offset, dense or with entries deleted by hand', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(batchArb, { minLength: 1, maxLength: 6 }),
        fc.array(fc.nat(), { maxLength: 4 }),
        fc.array(fc.record({ from: fc.nat(), max: fc.integer({ min: 1, max: 30 }) }), { minLength: 1, maxLength: 4 }),
        async (batches, deletions, reads) => {
          const b = await RedisBackend.connect({ url: server.url, cluster: false }, { prefix: `pk${randomBytes(4).toString('hex')}:`, clientId: 'prop' })
          try {
            const meta = topicMeta('t')
            await b.createTopic(meta)
            const written: Array<{ value: string | Buffer; headers: Record<string, string>; producer: string } | undefined> = []
            for (const batch of batches) {
              const base = await b.append('t', 0, records(meta, batch.specs), batch.producer)
              expect(base).toBe(written.length)
              for (const s of batch.specs) written.push({ value: s.value, headers: s.headers ?? {}, producer: batch.producer })
            }
            for (const d of deletions) {
              const o = d % written.length
              await b.client.xdel(b.keys.stream('t', 0), `${o}-1`)
              written[o] = undefined
            }
            for (const { from, max } of reads) {
              const start = from % (written.length + 1)
              const reader = await b.openReader('t', 0, start)
              const got = await reader.read(max)
              const want = written
                .map((w, offset) => ({ w, offset }))
                .filter((x) => x.offset >= start && x.w !== undefined)
                .slice(0, max)
              expect(got.map((m) => m.offset)).toEqual(want.map((x) => x.offset))
              for (const [i, m] of got.entries()) {
                const w = want[i]?.w as NonNullable<(typeof written)[number]>
                expect(m.value).toEqual(w.value)
                expect(m.headers).toEqual(w.headers)
                expect(m.producerId).toBe(w.producer)
              }
              await reader.close()
            }
          } finally {
            await b.close()
          }
        },
      ),
      { numRuns: 60 },
    )
  }, 120_000)
})
