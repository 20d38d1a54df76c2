// Dead letters are written as the topic's producer would write them: the partition it chooses for
// the key, its validation of size and type, and the message's original type kept.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { open, type ConsumerOptions, type GroupMessage, type Twain } from '../../../src/index.js'
import { tempDir } from '../../helpers/tmp.js'
import { until } from '../../helpers/wait.js'

const FAST = {
  group: 'g',
  sessionTimeoutMs: 2000,
  heartbeatIntervalMs: 200,
  commitIntervalMs: 100,
  deadLetter: 'dlq',
} satisfies ConsumerOptions

let tmp: ReturnType<typeof tempDir>
let twain: Twain
const closing: Twain[] = []
beforeEach(async () => {
  tmp = tempDir('twainmq-dlq-')
  twain = await open(tmp.dir, { pollMs: 50 })
})
afterEach(async () => {
  for (const t of closing.splice(0)) await t.close()
  await twain.close()
  tmp.remove()
})

async function history(
  t: Twain,
  topic: string,
): Promise<
  Array<{ key: unknown; partition: number; value: unknown; type?: string | undefined; headers: Record<string, string> }>
> {
  const out = []
  for await (const m of t.history(topic)) out.push(m)
  return out
}

async function poll<V>(c: { pollMany(n: number): GroupMessage<V>[] }, n: number): Promise<GroupMessage<V>[]> {
  const got: GroupMessage<V>[] = []
  await until(() => (got.push(...c.pollMany(n - got.length)), got.length >= n), 5000, `${n} messages polled`)
  return got
}

describe('dead letters', () => {
  it('go to the partition the producer chooses for the key on a dead-letter topic of several partitions', async () => {
    const keys = Array.from({ length: 24 }, (_, i) => `key-${i}`)
    await twain.createTopic('t', { keyType: 'string' })
    await twain.createTopic('dlq', { keyType: 'string', partitions: 4 })
    await twain.createTopic('probe', { keyType: 'string', partitions: 4 })
    const expected = new Map<string, number>()
    for (const k of keys) expected.set(k, (await twain.producer('probe').send(k, 'x')).partition)
    expect(new Set(expected.values()).size).toBeGreaterThan(1) // the keys spread: the test can tell partitions apart
    await twain.producer('t').sendBatch(keys.map((key) => ({ key, value: 'v' })))
    const c = twain.consumer<string>('t', FAST)
    for (const m of await poll(c, keys.length)) m.term('bad')
    await until(async () => (await twain.length('dlq')) === keys.length, 5000, 'every dead letter')
    await c.close()
    const dead = await history(twain, 'dlq')
    expect(dead.map((d) => [d.key, d.partition]).sort()).toEqual([...expected].sort())
  })

  it('keep a type the consumer never registered, and a value that failed its validation as it was read', async () => {
    const writer = await open(tmp.dir, { pollMs: 50 })
    closing.push(writer)
    writer.registerType('Order') // no validator: anything goes in
    writer.registerType('Unknown') // registered only by the writer
    await twain.createTopic('t', { keyType: 'string' })
    await writer.producer('t').send('a', { id: 'not a number' }, { type: 'Order' })
    await writer.producer('t').send('b', { n: 1 }, { type: 'Unknown' })
    twain.registerType('Order', (v) => {
      if (typeof (v as { id?: unknown }).id !== 'number') throw new Error('id must be a number')
      return v
    })
    const c = twain.consumer('t', FAST)
    const [bad, unknown] = await poll(c, 2)
    expect(bad!.error).toBeInstanceOf(Error)
    bad!.term('invalid')
    unknown!.term('unknown type')
    await until(
      async () => (await twain.topicExists('dlq')) && (await twain.length('dlq')) === 2,
      5000,
      'both dead letters',
    )
    await c.close()
    const dead = await history(writer, 'dlq')
    expect(dead.map((d) => ({ key: d.key, type: d.type, value: d.value }))).toEqual([
      { key: 'a', type: 'Order', value: { id: 'not a number' } },
      { key: 'b', type: 'Unknown', value: { n: 1 } },
    ])
  })

  it("one larger than the dead-letter topic's maxMessageBytes is refused with a retriable ERR_DEAD_LETTER, and the message comes back", async () => {
    await twain.createTopic('t', { keyType: 'string' })
    await twain.createTopic('dlq', { keyType: 'string', maxMessageBytes: 100 })
    await twain.producer('t').send('k', 'x'.repeat(200))
    const c = twain.consumer<string>('t', FAST)
    const errors: Error[] = []
    c.on('error', (e) => errors.push(e))
    const [m] = await poll(c, 1)
    m!.term('too big for the dead-letter topic')
    await until(() => errors.length > 0, 5000, "an 'error' event")
    expect(errors[0]).toMatchObject({ code: 'ERR_DEAD_LETTER', retriable: true })
    expect(errors[0]!.message).toMatch(/t\/0@0 to "dlq" failed: .*maxMessageBytes 100/)
    expect(await twain.length('dlq')).toBe(0)
    const [again] = await poll(c, 1)
    expect(again!.offset).toBe(0)
    again!.ack()
    await c.close()
  })
})
