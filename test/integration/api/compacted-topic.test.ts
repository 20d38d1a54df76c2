// A compacted topic through the public API on a directory: after `compactTopic`, every reader
// steps over the removed offsets — history, tail, a consumer group, a processor and the HTTP
// gateway's reads — and describeTopic reports the pass. (The backend contract,
// test/contract/compaction.test.ts, covers the store's side on every backend.)
import { describe, expect, it } from 'vitest'
import { InvalidArgumentError, open, type Message, type Twain } from '../../../src/index.js'
import { createGateway } from '../../../src/gateway/index.js'
import { useFileStore } from '../../helpers/file-store.js'
import { until } from '../../helpers/wait.js'

const KEYS = ['a', 'b', 'c']
const ROUNDS = 40

/** 40 updates of each key (values `a0`…`a39`…), 1 KiB segments so that most end sealed; then one pass. */
async function fill(twain: Twain): Promise<Map<string, Message>> {
  await twain.createTopic('prices', { keyType: 'string', compact: true })
  const p = twain.producer<string, string>('prices')
  for (let r = 0; r < ROUNDS; r++) for (const k of KEYS) await p.send(k, `${k}${r}`)
  await p.close()
  const latest = new Map<string, Message>()
  for await (const m of twain.history('prices')) latest.set(m.key as string, m)
  await twain.compactTopic('prices')
  return latest
}

const view = (ms: Iterable<Message>) =>
  [...ms].sort((x, y) => x.offset - y.offset).map((m) => [m.offset, m.key, m.value])

describe('a compacted topic on a directory', () => {
  const store = useFileStore({ segmentBytes: 1024 })

  it('history gives each key its latest value at its offset; describeTopic reports the pass', async () => {
    const latest = await fill(store.twain)
    const all: Message[] = []
    for await (const m of store.twain.history('prices')) all.push(m)
    expect(view(all)).toEqual(view(latest.values()))
    expect(all.map((m) => m.value)).toEqual(['a39', 'b39', 'c39'])
    const info = await store.twain.describeTopic('prices')
    expect(info).toMatchObject({ compact: true, tombstoneRetentionMs: 86_400_000 })
    expect(info.offsets).toEqual([{ partition: 0, start: 0, end: KEYS.length * ROUNDS }])
    expect(info.lastCompaction?.after.records).toBe(3)
    expect(info.lastCompaction?.before.records).toBeGreaterThan(3)
    // History from an offset that was removed starts at the next one kept.
    const from: Message[] = []
    for await (const m of store.twain.history('prices', { from: 5 })) from.push(m)
    expect(view(from)).toEqual(view(all))
  })

  it('a tail from the start steps over the gaps and then follows new sends', async () => {
    await fill(store.twain)
    const tail = store.twain.tail<string, string>('prices', { from: 'start' })
    const got: Message[] = []
    const reading = (async () => {
      for await (const m of tail) {
        got.push(m)
        if (got.length === 4) break
      }
    })()
    await until(() => got.length === 3, 10_000, 'the three kept messages')
    await store.twain.producer('prices').send('a', 'new')
    await reading
    expect(got.map((m) => m.value)).toEqual(['a39', 'b39', 'c39', 'new'])
    expect(got[3]?.offset).toBe(KEYS.length * ROUNDS)
  })

  it('a consumer group reads the kept messages and commits past the gaps', async () => {
    await fill(store.twain)
    const c = store.twain.consumer<string, string>('prices', { group: 'g', commitIntervalMs: 60_000 })
    const got: Message[] = []
    await until(() => (got.push(...c.pollMany(10)), got.length >= 3), 10_000, 'three group messages')
    for (const m of got) (m as unknown as { ack(): void }).ack()
    await c.commit()
    await c.close()
    expect(got.map((m) => m.value)).toEqual(['a39', 'b39', 'c39'])
    const g = await store.twain.describeGroup('g')
    expect(JSON.stringify(g)).toContain(String(KEYS.length * ROUNDS))
  })

  it('a processor reads the kept messages and writes its outputs once', async () => {
    await fill(store.twain)
    await store.twain.createTopic('out', { keyType: 'string' })
    const p = store.twain.processor<string, string>('prices', { group: 'etl', commitIntervalMs: 60_000 })
    const got: Array<{ value: string; send(t: string, k: string, v: string): Promise<unknown>; ack(): void }> = []
    await until(() => (got.push(...(p.pollMany(10) as never[])), got.length >= 3), 10_000, 'three processor messages')
    for (const m of got) {
      await m.send('out', 'k', `${m.value}!`)
      m.ack()
    }
    await p.close()
    const out: unknown[] = []
    for await (const m of store.twain.history('out')) out.push(m.value)
    expect(out).toEqual(['a39!', 'b39!', 'c39!'])
  })

  it('the HTTP gateway reads the kept messages, from the start and from an offset inside a gap', async () => {
    await fill(store.twain)
    const gateway = createGateway(store.twain)
    const fetchIt = gateway.fetch
    try {
      const whole = await fetchIt(new Request('http://gw/v1/stream/prices?offset=-1'))
      expect(whole.status).toBe(200)
      expect(await whole.json()).toEqual(['a39', 'b39', 'c39'])
      const next = whole.headers.get('stream-next-offset') as string
      const inGap = `${next.split('_')[0]}_${'5'.padStart(16, '0')}` // documented format: incarnation_offset
      const fromGap = await fetchIt(new Request(`http://gw/v1/stream/prices?offset=${inGap}`))
      expect(await fromGap.json()).toEqual(['a39', 'b39', 'c39'])
      expect(fromGap.headers.get('stream-next-offset')).toBe(next)
    } finally {
      await gateway.close()
    }
  })

  it('compactTopic of a topic that is not compacted is refused by name; options are checked', async () => {
    await store.twain.createTopic('plain')
    await expect(store.twain.compactTopic('plain')).rejects.toThrow(InvalidArgumentError)
    await expect(store.twain.compactTopic('plain')).rejects.toThrow(/"plain" is not compacted/)
    await expect(store.twain.createTopic('x', { tombstoneRetentionMs: 5 })).rejects.toThrow(/pass compact: true/)
    await expect(store.twain.createTopic('x', { compact: 'yes' as never })).rejects.toThrow(/compact must be a boolean/)
    await expect(store.twain.createTopic('x', { compact: true, tombstoneRetentionMs: -1 })).rejects.toThrow(
      /tombstoneRetentionMs/,
    )
    expect((await store.twain.describeTopic('plain')).compact).toBe(false)
    await store.twain.createTopic('kept', { compact: true })
    await expect(store.twain.ensureTopic('kept', { compact: false })).rejects.toThrow(/compact true, not false/)
    await store.twain.ensureTopic('kept', { compact: true })
  })

  it('the twainmq-v1 format refuses compact by name', async () => {
    const v1 = await open(store.dir, { format: 'twainmq-v1' })
    try {
      await expect(v1.createTopic('py', { compact: true })).rejects.toThrow(InvalidArgumentError)
      await expect(v1.createTopic('py', { compact: true })).rejects.toThrow(/compact: true/)
    } finally {
      await v1.close()
    }
  })
})
