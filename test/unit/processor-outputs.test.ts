// A processor's output lanes (consumer/partitioned/outputs.ts): how sends become store calls.
import { describe, expect, it } from 'vitest'
import type { Backend, OutputSource, SourcePosition, TopicMeta } from '../../src/backends/backend.js'
import { ID_HEADER, type RecordInput } from '../../src/backends/record.js'
import { cachedHash64 } from '../../src/core/hash64.js'
import { type OutputMetadata, type OutputOf, type OutputOptions } from '../../src/consumer/partitioned/output-record.js'
import { Outputs } from '../../src/consumer/partitioned/outputs.js'
import { OwnedPartition } from '../../src/consumer/partitioned/owned-partition.js'
import type { PartitionHandle } from '../../src/consumer/partitioned/partition-message.js'

const META: TopicMeta = {
  name: 'out',
  partitions: 1,
  keyType: 'string',
  messageTypes: [],
  retention: {},
  maxMessageBytes: 1 << 20,
  createdAt: 0,
}

interface Call {
  source: OutputSource
  positions: SourcePosition[]
  records: RecordInput[]
  release: () => void
}

/** A store whose `appendSourced` calls wait until released; `getTopic` answers after a few ticks. */
function heldStore(): { store: Backend; calls: Call[] } {
  const calls: Call[] = []
  let next = 0
  const store = {
    getTopic: async () => {
      await new Promise((r) => setImmediate(r))
      return META
    },
    appendSourced: (
      _topic: string,
      _partition: number,
      records: readonly RecordInput[],
      _producerId: string,
      source: OutputSource,
      positions: readonly SourcePosition[],
    ) =>
      new Promise((resolve) => {
        calls.push({
          source,
          positions: [...positions],
          records: [...records],
          release: () => resolve(records.map(() => ({ offset: next++, duplicate: false }))),
        })
      }),
  } as unknown as Backend
  return { store, calls }
}

const outputs = (store: Backend): Outputs =>
  new Outputs(store, 'g', 'producer-1', { validate: (_t, v) => Promise.resolve(v) }, cachedHash64())

const handle = (partition: number): PartitionHandle => ({
  part: new OwnedPartition('in', partition, 1, 0),
  generation: 0,
})

/** An output of `m` as a promise (`Outputs.emit`). */
const send = (
  o: Outputs,
  m: OutputOf,
  h: PartitionHandle,
  seq: number,
  token: number,
  topic: string,
  key: string,
  value: unknown,
): Promise<OutputMetadata> =>
  new Promise<OutputMetadata>((resolve, reject) =>
    o.emit(m, h, seq, token, topic, key, value, undefined, resolve, reject),
  )

/** A message of the given offset (its outputs' settlements are not counted here). */
const msg = (offset: number) => ({ offset, outputDone: () => undefined })

/** Ten turns of the event loop: a lane waits one before its call, and the fake store answers in microtasks. */
async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r))
}

/** Outputs of a held store that know the topic already (a send before that waits for it): its first call, of one output, stored. */
async function learned(): Promise<{ o: Outputs; h: PartitionHandle; calls: Call[] }> {
  const { store, calls } = heldStore()
  const o = outputs(store)
  const h = handle(0)
  const first = send(o, msg(0), h, 0, 0, 'out', 'k', 'v')
  await settle()
  calls[0]?.release()
  await first
  await settle()
  return { o, h, calls }
}

describe('processor outputs', () => {
  it('sends made before the topic is known go in one call, not one call per stored output', async () => {
    const { store, calls } = heldStore()
    const o = outputs(store)
    const h = handle(0)
    const sent = Array.from({ length: 10 }, (_, i) => send(o, msg(i), h, 0, 0, 'out', `k${i}`, 'v'))
    await settle()
    expect(calls.map((c) => c.positions.length)).toEqual([10])
    // Sends while that call is under way wait for it, then go together.
    const more = Array.from({ length: 5 }, (_, i) => send(o, msg(10 + i), h, 0, 0, 'out', `k${i}`, 'v'))
    await settle()
    expect(calls).toHaveLength(1)
    calls[0]?.release()
    await settle()
    expect(calls.map((c) => c.positions.map((p) => p.offset))).toEqual([
      [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
      [10, 11, 12, 13, 14],
    ])
    calls[1]?.release()
    expect((await Promise.all([...sent, ...more])).map((r) => r.offset)).toEqual([...Array(15).keys()])
  })

  it('an output is written as given, its event time kept, and an `id` option (outputs have none) left out', async () => {
    const { store, calls } = heldStore()
    const o = outputs(store)
    const sent = new Promise<OutputMetadata>((resolve, reject) =>
      o.emit(
        msg(3),
        handle(0),
        0,
        0,
        'out',
        'k',
        { n: 1 },
        { headers: { h: 'v' }, timestamp: 1234, id: 'not-an-output-option' } as OutputOptions,
        resolve,
        reject,
      ),
    )
    await settle()
    calls[0]?.release()
    expect(await sent).toEqual({ topic: 'out', partition: expect.any(Number), offset: 0 })
    const [r] = calls[0]?.records ?? []
    expect(r).toMatchObject({ timestamp: 1234, headers: { h: 'v' }, value: '{"n":1}' })
    expect(r?.headers).not.toHaveProperty(ID_HEADER)
  })

  it("one call per input partition, each in its outputs' send order, when their outputs interleave", async () => {
    const { store, calls } = heldStore()
    const o = outputs(store)
    const first = send(o, msg(0), handle(9), 0, 0, 'out', 'k', 'v') // the topic learnt
    await settle()
    calls.shift()?.release()
    await first
    const [h0, h1] = [handle(0), handle(1)]
    const sent = [
      send(o, msg(5), h0, 0, 0, 'out', 'a', 'v'),
      send(o, msg(7), h1, 0, 0, 'out', 'b', 'v'),
      send(o, msg(5), h0, 1, 0, 'out', 'c', 'v'),
      send(o, msg(8), h1, 0, 0, 'out', 'd', 'v'),
      send(o, msg(6), h0, 0, 0, 'out', 'e', 'v'),
    ]
    await settle()
    calls[0]?.release()
    await settle()
    calls[1]?.release()
    await Promise.all(sent)
    expect(calls.map((c) => [c.source.partition, c.positions.map((p) => `${p.offset}.${p.seq}`)])).toEqual([
      [0, ['5.0', '5.1', '6.0']],
      [1, ['7.0', '8.0']],
    ])
  })

  it('a burst of outputs of open messages is written in the same turn; outputs of acked messages wait for the next', async () => {
    const { o, h, calls } = await learned()
    const microtasks = async (): Promise<void> => {
      for (let i = 0; i < 50; i++) await Promise.resolve()
    }
    const sizes = (): number[] => calls.map((c) => c.positions.length)
    const as = (offset: number, open: boolean): OutputOf => ({ ...msg(offset), isOpen: () => open })
    // A `for await` loop: each message acked before the next one sends. Gathered until the next turn.
    const each = Array.from({ length: 100 }, (_, i) => send(o, as(1 + i, false), h, 0, 0, 'out', `k${i}`, 'v'))
    await microtasks()
    expect(sizes()).toEqual([1])
    await new Promise((r) => setImmediate(r))
    await microtasks()
    expect(sizes()).toEqual([1, 100])
    calls[1]?.release()
    await Promise.all(each)
    await settle()
    // One message sending many outputs waits for the turn too (the next messages' outputs join them).
    const one = as(101, true)
    const many = Array.from({ length: 100 }, (_, i) => send(o, one, h, i, 0, 'out', `k${i}`, 'v'))
    await microtasks()
    expect(sizes()).toEqual([1, 100])
    await settle()
    expect(sizes()).toEqual([1, 100, 100])
    calls[2]?.release()
    await Promise.all(many)
    await settle()
    // A batch: every message's outputs sent before any is acked. Written without waiting for the turn.
    const batch = Array.from({ length: 100 }, (_, i) => send(o, as(102 + i, true), h, 0, 0, 'out', `k${i}`, 'v'))
    await microtasks()
    expect(sizes()).toEqual([1, 100, 100, 100])
    calls[3]?.release()
    expect((await Promise.all(batch)).map((r) => r.offset)).toEqual(Array.from({ length: 100 }, (_, i) => 201 + i))
  })

  it('an output without an event time is stamped when its call is written, not when it is sent', async () => {
    const { o, h, calls } = await learned()
    const sent = send(o, msg(1), h, 0, 0, 'out', 'k', 'v')
    // The clock moves on before the lane's call is made (the event loop has not turned yet).
    const later = Date.now() + 5
    while (Date.now() < later) {
      // spin: no turn of the event loop, so the call is not made meanwhile
    }
    await settle()
    expect(calls).toHaveLength(2)
    expect(calls[1]?.records[0]?.timestamp).toBeGreaterThanOrEqual(later)
    calls[1]?.release()
    await sent
  })
})
