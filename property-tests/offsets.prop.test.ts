import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { open, type Message, type RecordMetadata, type Twain } from '../src/index.js'
import { collect, makeTmp, rmTmp, takeN } from '../test/unit/helpers.js'

const PARTITIONS = 3

/** One producer operation: which instance, send or sendBatch, the items, and whether to await it before the next. */
const opArb = fc.record({
  instance: fc.constantFrom(0, 1),
  kind: fc.constantFrom('send', 'batch'),
  items: fc.array(
    fc.record({
      key: fc.integer({ min: 0, max: 65535 }),
      partition: fc.option(fc.integer({ min: 0, max: PARTITIONS - 1 }), { nil: undefined }),
      size: fc.integer({ min: 0, max: 200 }),
    }),
    { minLength: 1, maxLength: 6 },
  ),
  awaitIt: fc.boolean(),
})
type Op = typeof opArb extends fc.Arbitrary<infer O> ? O : never

/** Check one reader's view: per partition, offsets 0,1,2,… each +1, with the value the send reported for that place. */
function checkReader(name: string, msgs: Message[], sentAt: Map<string, string>, counts: number[]): void {
  const last = new Array<number>(PARTITIONS).fill(-1)
  for (const m of msgs) {
    expect(m.offset, `${name}: partition ${m.partition} offset after ${last[m.partition]}`).toBe(last[m.partition]! + 1)
    last[m.partition] = m.offset
    expect(m.value, `${name}: value at ${m.partition}/${m.offset}`).toBe(sentAt.get(`${m.partition}/${m.offset}`))
  }
  expect(
    last.map((l) => l + 1),
    `${name}: messages per partition`,
  ).toEqual(counts)
}

async function run(ops: Op[]): Promise<void> {
  const dir = makeTmp()
  const twains: Twain[] = []
  try {
    // tiny segments so runs also cross segment rolls; two instances act as two processes
    twains.push(await open(dir, { clientId: 'A', segmentBytes: 1024 }))
    twains.push(await open(dir, { clientId: 'B', segmentBytes: 1024 }))
    await twains[0]!.createTopic('prop', { partitions: PARTITIONS })
    const producers = twains.map((t) => t.producer<string>('prop'))
    const tail = twains[1]!.tail<string>('prop', { from: 'start' })

    let seq = 0
    const pending: Array<Promise<void>> = []
    const sent: Array<{ value: string; meta?: RecordMetadata; op: number; index: number; instance: number }> = []
    for (const [opIndex, op] of ops.entries()) {
      const p = producers[op.instance]!
      const entries = op.items.map((it, index) => {
        const value = `${seq++}:${'v'.repeat(it.size)}`
        const e: (typeof sent)[number] = { value, op: opIndex, index, instance: op.instance }
        sent.push(e)
        return { e, it }
      })
      let done: Promise<void>
      if (op.kind === 'batch') {
        done = p
          .sendBatch(entries.map(({ e, it }) => ({ key: it.key, value: e.value, partition: it.partition })))
          .then((metas) => {
            metas.forEach((m, i) => (entries[i]!.e.meta = m))
          })
      } else {
        done = Promise.all(
          entries.map(({ e, it }) =>
            p
              .send(it.key, e.value, it.partition === undefined ? {} : { partition: it.partition })
              .then((m) => void (e.meta = m)),
          ),
        ).then(() => undefined)
      }
      pending.push(done)
      if (op.awaitIt) await done
    }
    await Promise.all(pending)

    // 1. the offsets the sends reported are exactly 0..n-1 in every partition
    const counts = new Array<number>(PARTITIONS).fill(0)
    const sentAt = new Map<string, string>()
    for (const s of sent) {
      const m = s.meta!
      expect(sentAt.has(`${m.partition}/${m.offset}`), `offset ${m.partition}/${m.offset} reported twice`).toBe(false)
      sentAt.set(`${m.partition}/${m.offset}`, s.value)
      counts[m.partition]!++
    }
    for (let p = 0; p < PARTITIONS; p++)
      for (let o = 0; o < counts[p]!; o++) expect(sentAt.has(`${p}/${o}`), `hole at ${p}/${o}`).toBe(true)

    // 2. within one producer, later-issued items to a partition get higher offsets
    for (const instance of [0, 1]) {
      const mine = sent.filter((s) => s.instance === instance)
      for (let p = 0; p < PARTITIONS; p++) {
        const offs = mine.filter((s) => s.meta!.partition === p).map((s) => s.meta!.offset)
        expect(offs, `producer ${instance} partition ${p} in issue order`).toEqual([...offs].sort((a, b) => a - b))
      }
    }

    // 3. every reader sees each partition as 0,1,2,… with the reported values
    const total = sent.length
    checkReader('history A', await collect(twains[0]!.history<string>('prop')), sentAt, counts)
    checkReader('history B', await collect(twains[1]!.history<string>('prop')), sentAt, counts)
    const perPartition: Message[] = []
    for (let p = 0; p < PARTITIONS; p++)
      perPartition.push(...(await collect(twains[0]!.history<string>('prop', { partition: p }))))
    checkReader('history per partition', perPartition, sentAt, counts)
    checkReader('tail B from start', await takeN(tail, total, 10_000), sentAt, counts)
    const info = await twains[1]!.describeTopic('prop')
    expect(info.offsets.map((o) => o.end)).toEqual(counts)
    expect(await twains[0]!.length('prop')).toBe(total)
  } finally {
    for (const t of twains) await t.close()
    rmTmp(dir)
  }
}

describe('offset properties', () => {
  it('law: offsets in one partition strictly increase by 1 (0,1,2,…) for every reader, for any mix of send/sendBatch from two instances across partitions', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 12 }), (ops) => run(ops)),
      { numRuns: 25 },
    )
  })
})
