import fc from 'fast-check'
import { appendFileSync, readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { open, type Message } from '../src/index.js'
import { compareChunks, parseChunkName, type Chunk } from '../src/compat/twainmq/chunks.js'
import { collect, makeTmp, rmTmp } from '../test/unit/helpers.js'

type Op =
  | { kind: 'send'; partition: number; values: string[] }
  | { kind: 'day'; days: number }
  | { kind: 'tear'; partition: number }

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('send' as const),
      partition: fc.integer({ min: 0, max: 2 }),
      values: fc.array(fc.string({ maxLength: 12 }), { minLength: 1, maxLength: 4 }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('day' as const), days: fc.integer({ min: 1, max: 3 }) }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('tear' as const), partition: fc.integer({ min: 0, max: 2 }) }),
  },
)

afterEach(() => {
  vi.useRealTimers()
})

describe('TwainMQ partitions (properties)', () => {
  it('offsets are the line indexes across day chunks: dense, in append order, torn lines keeping their own offset', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 25 }), async (ops) => {
        vi.useFakeTimers({ toFake: ['Date'] })
        let now = Date.UTC(2024, 0, 1, 12)
        vi.setSystemTime(now)
        const dir = makeTmp()
        const twain = await open(dir, { format: 'twainmq-v1' })
        try {
          await twain.createTopic('t', { partitions: 3 })
          const p = twain.producer('t')
          const model: Array<Array<string | null>> = [[], [], []] // per partition, what each offset holds (null = a torn line)
          for (const op of ops) {
            if (op.kind === 'day') {
              now += op.days * 86_400_000
              vi.setSystemTime(now)
            } else if (op.kind === 'tear') {
              // A writer crashes mid-line in the newest chunk of the partition.
              const newest = chunksOf(dir, op.partition).at(-1)
              if (!newest || !readFileSync(join(dir, 't', newest.name), 'latin1').endsWith('\n')) continue
              appendFileSync(join(dir, 't', newest.name), '00A')
              model[op.partition]!.push(null)
            } else {
              const rs = await p.sendBatch(op.values.map((value) => ({ key: 1, value, partition: op.partition })))
              expect(rs.map((r) => r.offset)).toEqual(op.values.map((_, i) => model[op.partition]!.length + i))
              model[op.partition]!.push(...op.values)
            }
          }
          for (let part = 0; part < 3; part++) {
            // Torn lines at the very end are not complete lines yet: not read, not counted.
            let want = model[part]!
            while (want.length > 0 && want[want.length - 1] === null) want = want.slice(0, -1)
            const got: Message[] = await collect(twain.history('t', { partition: part }))
            expect(got.map((m) => m.offset)).toEqual(want.map((_, i) => i))
            expect(got.map((m) => (m.error ? null : m.value))).toEqual(want)
            // Chunk names: each chunk starts where the previous one's lines end (a torn line counts).
            const chunks = chunksOf(dir, part)
            for (let i = 1; i < chunks.length; i++) {
              const prev = chunks[i - 1]!
              const text = readFileSync(join(dir, 't', prev.name), 'latin1')
              const lines = text.split('\n').length - 1 + (text.endsWith('\n') || text === '' ? 0 : 1)
              expect(chunks[i]!.start).toBe(prev.start + lines)
              expect(chunks[i]!.day > prev.day).toBe(true)
            }
          }
        } finally {
          await twain.close()
          rmTmp(dir)
          vi.useRealTimers()
        }
      }),
      { numRuns: 40 },
    )
  })
})

function chunksOf(dir: string, partition: number): Chunk[] {
  return readdirSync(join(dir, 't'))
    .map(parseChunkName)
    .filter((c): c is Chunk => c !== undefined && c.partition === partition)
    .sort(compareChunks)
}
