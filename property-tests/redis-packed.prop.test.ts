// The Redis read path end to end against a real redis-server: records of random values (text with
// any Unicode, bytes), headers and producer ids are appended in random batches, some entries are
// deleted by hand (so the packed reply must carry offsets), and random reads from random offsets
// decode exactly what was written at each offset (the `read` script's packed reply and its decoder).
// One reader going on through raw reads cut by byte budgets and decoded reads, in any order, gives
// every record once, in order, with the producer id in force at it (decision 170).
import fc from 'fast-check'
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { rawBudget } from '../src/backends/record.js'
import { RedisBackend } from '../src/backends/redis/redis-backend.js'
import { records, topicMeta, type RecordSpec } from '../test/contract/fixture.js'
import { RedisServer } from '../test/helpers/redis-server.js'

const specArb: fc.Arbitrary<RecordSpec> = fc.record({
  value: fc.oneof(
    fc.string({ unit: 'binary', maxLength: 40 }),
    fc.uint8Array({ maxLength: 40 }).map((a) => Buffer.from(a)),
  ),
  headers: fc.option(
    fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.string({ unit: 'grapheme', maxLength: 12 }), {
      maxKeys: 3,
    }),
    { nil: undefined },
  ),
})
const batchArb = fc.record({
  producer: fc.constantFrom('p1', 'producer-two', 'ü-3'),
  specs: fc.array(specArb, { minLength: 1, maxLength: 12 }),
})

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
          const b = await RedisBackend.connect(
            { url: server.url, cluster: false },
            { prefix: `pk${randomBytes(4).toString('hex')}:`, clientId: 'prop' },
          )
          try {
            const meta = topicMeta('t')
            await b.createTopic(meta)
            const written: Array<
              { value: string | Buffer; headers: Record<string, string>; producer: string } | undefined
            > = []
            for (const batch of batches) {
              const base = await b.append('t', 0, records(meta, batch.specs), batch.producer)
              expect(base).toBe(written.length)
              for (const s of batch.specs)
                written.push({ value: s.value, headers: s.headers ?? {}, producer: batch.producer })
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

  it('raw reads cut by budgets and decoded reads go on from each other over kept replies', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(batchArb, { minLength: 1, maxLength: 6 }),
        fc.array(fc.nat(), { maxLength: 3 }),
        fc.array(
          fc.record({
            raw: fc.boolean(),
            max: fc.integer({ min: 1, max: 2000 }),
            budget: fc.option(fc.integer({ min: 0, max: 120 }), { nil: undefined }),
          }),
          { minLength: 1, maxLength: 12 },
        ),
        async (batches, deletions, steps) => {
          const b = await RedisBackend.connect(
            { url: server.url, cluster: false },
            { prefix: `pb${randomBytes(4).toString('hex')}:`, clientId: 'prop' },
          )
          try {
            const meta = topicMeta('t')
            await b.createTopic(meta)
            const written: Array<{ value: string | Buffer; producer: string } | undefined> = []
            // Batches repeated so a read can fill and keep a reply of 1024.
            for (let round = 0; round < 60; round++) {
              for (const batch of batches) {
                await b.append('t', 0, records(meta, batch.specs), batch.producer)
                for (const s of batch.specs) written.push({ value: s.value, producer: batch.producer })
              }
            }
            for (const d of deletions) {
              const o = d % written.length
              await b.client.xdel(b.keys.stream('t', 0), `${o}-1`)
              written[o] = undefined
            }
            const want = written.map((w, offset) => ({ w, offset })).filter((x) => x.w !== undefined)
            const reader = await b.openReader('t', 0, 0)
            let at = 0
            for (let k = 0; at < want.length; k++) {
              const step = steps[k % steps.length] as (typeof steps)[number]
              if (step.raw) {
                const budget = step.budget === undefined ? undefined : rawBudget(step.budget)
                const got = await reader.readRaw!(step.max, budget)
                expect(got.length).toBeGreaterThan(0)
                if (budget)
                  expect(got.reduce((n, r) => n + r.end - r.start, 0) <= step.budget! || got.length === 1).toBe(true)
                for (const r of got) {
                  const w = want[at++] as (typeof want)[number]
                  expect(r.offset).toBe(w.offset)
                  expect(Buffer.from(r.buf.subarray(r.start, r.end))).toEqual(Buffer.from(w.w!.value))
                }
              } else {
                const got = await reader.read(step.max)
                expect(got.length).toBeGreaterThan(0)
                for (const m of got) {
                  const w = want[at++] as (typeof want)[number]
                  expect(m.offset).toBe(w.offset)
                  expect(m.value).toEqual(w.w!.value)
                  expect(m.producerId).toBe(w.w!.producer)
                }
              }
              expect(reader.next).toBe((want[at - 1] as (typeof want)[number]).offset + 1)
            }
            await reader.close()
          } finally {
            await b.close()
          }
        },
      ),
      { numRuns: 40 },
    )
  }, 180_000)
})
