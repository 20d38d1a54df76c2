// Compacted topics on Redis and on a Redis Cluster (DESIGN §3.12): a pass keeps the latest record of
// every key and removes the older ones (XDEL: offsets never change, so they have gaps), and removes
// tombstones (null values) kept longer than tombstoneRetentionMs; every reader steps over the gaps
// (history forward, reverse and bounded, a tail, a partitioned group, a shared group with pending
// entries removed under it, a processor); `send({ id })` still recognises a duplicate whose record
// was removed; the stats count records and bytes before and after; background passes of two
// processes on one topic leave it as one pass would.
import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import type { Backend, TopicMeta } from '../../../src/backends/backend.js'
import { RedisBackend } from '../../../src/backends/redis/redis-backend.js'
import { parseTarget } from '../../../src/facade/open-target.js'
import { backendOf } from '../../../src/facade/twain.js'
import { InvalidArgumentError, type Message, type ProcessorMessage, type Twain } from '../../../src/index.js'
import { backends, perTest } from '../../conformance/backends.js'
import { records, topicMeta } from '../../contract/fixture.js'
import { pollN } from '../../helpers/poll.js'
import { until } from '../../helpers/wait.js'

const kinds = backends().filter((k) => k.redis)

/** A compacted topic of string keys, made through the store (the options of `createTopic` are the API's). */
async function compacted(t: Twain, name: string, o: Partial<TopicMeta> = {}): Promise<TopicMeta> {
  const meta = topicMeta(name, { keyType: 'string', compact: true, ...o })
  await backendOf(t).createTopic(meta)
  return meta
}

/** Every message of `topic`'s history as `key=value@offset`. */
async function historyOf(t: Twain, topic: string, o: Parameters<Twain['history']>[1] = {}): Promise<string[]> {
  const out: string[] = []
  for await (const m of t.history<unknown>(topic, o))
    out.push(`${String(m.key)}=${JSON.stringify(m.value)}@${m.offset}`)
  return out
}

/** Updates `k0..k{keys-1}` round after round: value `r<round>`; offsets 0.. in that order (one partition). */
async function rounds(t: Twain, topic: string, keys: number, count: number): Promise<void> {
  const p = t.producer<unknown>(topic)
  for (let r = 0; r < count; r++)
    await p.sendBatch(Array.from({ length: keys }, (_, k) => ({ key: `k${k}`, value: `r${r}` })))
}

/** What a compacted history of `rounds(keys, count)` holds: the last round. */
const lastRound = (keys: number, count: number): string[] =>
  Array.from({ length: keys }, (_, k) => `k${k}="r${count - 1}"@${(count - 1) * keys + k}`)

describe.each(kinds)('compacted topics on $name', (kind) => {
  kind.hooks()
  const ctx = perTest(kind)

  it('the meta keeps compact and tombstoneRetentionMs; compact() of a topic that is not compacted is refused', async () => {
    await compacted(ctx.twain, 'c', { tombstoneRetentionMs: 1234 })
    await backendOf(ctx.twain).createTopic(topicMeta('plain'))
    const other = backendOf(await ctx.open())
    expect(await other.getTopic('c')).toMatchObject({ compact: true, tombstoneRetentionMs: 1234 })
    expect((await other.getTopic('plain')).compact).toBeUndefined()
    await expect(other.compact('plain')).rejects.toThrow(InvalidArgumentError)
    await expect(other.compact('plain')).rejects.toThrow(/"plain" is not compacted/)
    expect(await other.lastCompaction('c')).toBeUndefined()
  })

  it('a time seek after compaction removed the record that set a running maximum finds the first record at or after the time', async () => {
    const store = backendOf(ctx.twain)
    const meta = await compacted(ctx.twain, 'c')
    const at = async (key: string, ts: number) => store.append('c', 0, records(meta, [{ key, value: key }], ts), 'p')
    await at('a', 100) // 0
    await at('b', 200) // 1: removed by the pass (b is sent again), it set the maximum 2 carries
    await at('c', 150) // 2
    await at('b', 300) // 3
    await store.compact('c')
    expect((await historyOf(ctx.twain, 'c')).map((m) => m.split('@')[1])).toEqual(['0', '2', '3'])
    expect(await store.offsetForTime('c', 0, 180)).toBe(3)
    expect(await store.offsetForTime('c', 0, 120)).toBe(2)
    expect(await store.offsetForTime('c', 0, 50)).toBe(0)
    expect(await store.offsetForTime('c', 0, 400)).toBe(4)
  })

  it('a step begun on a compacted topic refuses the partition of a plain topic made again under its name', async () => {
    const store = backendOf(ctx.twain) as RedisBackend
    await store.createTopic(topicMeta('t', { keyType: 'string' }))
    await rounds(ctx.twain, 't', 3, 2)
    const keys = (['stream', 'end', 'start', 'compactIndex', 'compactTombstones', 'compactState'] as const).map((k) =>
      store.keys[k]('t', 0),
    )
    // What a pass of a process that read the topic's meta before it was deleted and made plain does next.
    await expect(store.scripts.call('compact', keys as never, [500, 0])).rejects.toThrow(/NOTOPIC/)
    expect(await historyOf(ctx.twain, 't')).toHaveLength(6)
  })

  it('a pass keeps the latest record of every key at its offset; history forward, reverse and bounded steps over the gaps; stats count before and after', async () => {
    await compacted(ctx.twain, 'c')
    await rounds(ctx.twain, 'c', 10, 5)
    const store = backendOf(ctx.twain)
    const all = await historyOf(ctx.twain, 'c')
    expect(all).toHaveLength(50)
    const stats = await store.compact('c')
    expect(stats.before.records).toBe(50)
    expect(stats.after.records).toBe(10)
    expect(stats.after.bytes).toBeGreaterThan(0)
    expect(stats.after.bytes * 5).toBe(stats.before.bytes) // every record of these is the same size
    expect(await store.lastCompaction('c')).toEqual(stats)
    expect(await historyOf(ctx.twain, 'c')).toEqual(lastRound(10, 5))
    expect(await historyOf(ctx.twain, 'c', { reverse: true })).toEqual(
      [...lastRound(10, 5)].sort((a, b) => Number(b.split('@')[1]) - Number(a.split('@')[1])),
    )
    expect(await historyOf(ctx.twain, 'c', { from: 3, to: 45 })).toEqual(lastRound(10, 5).slice(0, 5))
    expect(await historyOf(ctx.twain, 'c', { from: 42, to: 44 })).toEqual(lastRound(10, 5).slice(2, 4))
    expect(await historyOf(ctx.twain, 'c', { from: 3, to: 39 })).toEqual([])
    // Offsets never change: the end is where it was, new records go on from it.
    expect((await store.offsets('c'))[0]?.end).toBe(50)
    const sent = await ctx.twain.producer<string>('c').send('k0', 'new')
    expect(sent.offset).toBe(50)
    // A second pass finds only what came since.
    const again = await store.compact('c')
    expect([again.before.records, again.after.records]).toEqual([11, 10])
    expect(await historyOf(ctx.twain, 'c', { limit: 1 })).toEqual(['k1="r4"@41'])
  })

  it('tombstones: kept for tombstoneRetentionMs, then removed with every older record of their key', async () => {
    await compacted(ctx.twain, 'keep', { tombstoneRetentionMs: 3_600_000 })
    await compacted(ctx.twain, 'drop', { tombstoneRetentionMs: 0 })
    for (const topic of ['keep', 'drop']) {
      const p = ctx.twain.producer<unknown>(topic)
      await p.sendBatch([
        { key: 'a', value: 1 },
        { key: 'b', value: 1 },
        { key: 'a', value: null },
        { key: 'b', value: 2 },
        { key: 'c', value: null },
      ])
      await backendOf(ctx.twain).compact(topic)
    }
    expect(await historyOf(ctx.twain, 'keep')).toEqual(['a=null@2', 'b=2@3', 'c=null@4'])
    const drop = await historyOf(ctx.twain, 'drop')
    expect(drop).toEqual(['b=2@3'])
    const stats = await backendOf(ctx.twain).lastCompaction('drop')
    expect([stats?.before.records, stats?.after.records]).toEqual([5, 1])
    // A key whose tombstone went is a new key: its next record is kept.
    await ctx.twain.producer<unknown>('drop').send('a', 'back')
    await backendOf(ctx.twain).compact('drop')
    expect(await historyOf(ctx.twain, 'drop')).toEqual(['b=2@3', 'a="back"@5'])
  })

  it('a tail from the start, a partitioned group and a processor read the compacted topic across its gaps and go on with new records', async () => {
    await compacted(ctx.twain, 'c')
    await ctx.twain.createTopic('out', { keyType: 'string' })
    await rounds(ctx.twain, 'c', 4, 3)
    await backendOf(ctx.twain).compact('c')
    await ctx.twain.producer<string>('c').send('k9', 'late')
    const expected = [...lastRound(4, 3), 'k9="late"@12']
    const tailed: string[] = []
    for await (const m of ctx.twain.tail<string>('c', { from: 'start' })) {
      tailed.push(`${String(m.key)}=${JSON.stringify(m.value)}@${m.offset}`)
      if (tailed.length === 5) break
    }
    expect(tailed).toEqual(expected)
    const c = ctx.twain.consumer<string>('c', { group: 'g' })
    const got = await pollN(c, 5)
    expect(got.map((m) => `${String(m.key)}=${JSON.stringify(m.value)}@${m.offset}`)).toEqual(expected)
    for (const m of got) m.ack()
    await c.commit()
    expect((await ctx.twain.describeGroup('g')).topics[0]?.lag).toBe(0)
    await c.close()
    const proc = ctx.twain.processor<string>('c', { group: 'p', commitIntervalMs: 60_000 })
    const ins: ProcessorMessage<string>[] = []
    await until(() => (ins.push(...proc.pollMany(5 - ins.length)), ins.length >= 5), 5000, '5 processor messages')
    for (const m of ins) {
      await m.send('out', String(m.key), `${m.value}!`)
      m.ack()
    }
    await proc.close()
    expect((await historyOf(ctx.twain, 'out')).map((s) => s.split('@')[0])).toEqual([
      'k0="r2!"',
      'k1="r2!"',
      'k2="r2!"',
      'k3="r2!"',
      'k9="late!"',
    ])
  })

  it('a shared group: entries removed while pending are dropped from what is redelivered; the rest is delivered and acknowledged', async () => {
    await compacted(ctx.twain, 'c')
    await rounds(ctx.twain, 'c', 3, 1) // offsets 0..2
    const c = ctx.twain.consumer<string>('c', { group: 's', mode: 'shared', claimAfterMs: 60_000 })
    const errors: Error[] = []
    c.on('error', (e) => errors.push(e))
    const first = await pollN(c, 3)
    await rounds(ctx.twain, 'c', 2, 1) // k0, k1 again at 3, 4: 0 and 1 go while pending
    await backendOf(ctx.twain).compact('c')
    for (const m of first) m.nack()
    const later = await pollN(c, 3)
    expect(later.map((m) => `${String(m.key)}@${m.offset}`).sort()).toEqual(['k0@3', 'k1@4', 'k2@2'])
    for (const m of later) m.ack()
    await c.commit()
    await until(async () => (await ctx.twain.describeGroup('s')).topics[0]?.pending === 0, 5000, 'nothing pending')
    await c.close()
    // Removed by compaction is no failure to report (a newer record of the key was delivered).
    expect(errors).toEqual([])
  })

  it('send({ id }) within its window is a duplicate also once its record was compacted away', async () => {
    await compacted(ctx.twain, 'c')
    const p = ctx.twain.producer<string>('c')
    const first = await p.send('a', 'one', { id: 'x' })
    await p.send('a', 'two')
    await backendOf(ctx.twain).compact('c')
    expect(await historyOf(ctx.twain, 'c')).toEqual(['a="two"@1'])
    expect(await p.send('a', 'one', { id: 'x' })).toEqual({ ...first, duplicate: true })
    expect(await historyOf(ctx.twain, 'c')).toEqual(['a="two"@1'])
  })

  it('a trim under a compacted topic: the next pass builds its index again from the new start', async () => {
    await compacted(ctx.twain, 'c')
    await rounds(ctx.twain, 'c', 5, 4)
    const store = backendOf(ctx.twain)
    await store.compact('c')
    await store.trimBefore('c', 0, 17)
    await ctx.twain.producer<string>('c').send('k4', 'new')
    const stats = await store.compact('c')
    expect([stats.before.records, stats.after.records]).toEqual([4, 3])
    expect(await historyOf(ctx.twain, 'c')).toEqual(['k2="r3"@17', 'k3="r3"@18', 'k4="new"@20'])
  })

  it('a pass ends while appends go on trimming the topic (maxMessages: a window of many steps)', async () => {
    const target = parseTarget(ctx.store.target) as { url: string; cluster: boolean }
    const store = await RedisBackend.connect(target, {
      prefix: ctx.store.prefix,
      clientId: 'trimmed',
      compactEveryMs: 3_600_000,
      compactStep: 50,
    })
    try {
      const meta = topicMeta('r', { keyType: 'string', compact: true, retention: { maxMessages: 400 } })
      await store.createTopic(meta)
      const TOTAL = 20_000
      let appended = 0
      const writer = (async () => {
        while (appended < TOTAL) {
          const batch = Array.from({ length: 20 }, (_, j) => ({ key: `k${(appended + j) % 1000}`, value: 'v' }))
          await store.append('r', 0, records(meta, batch), 'w')
          appended += 20
        }
      })()
      await until(() => appended >= 1000, 20_000, 'the window full')
      const stats = await store.compact('r')
      // It ended while the appends (each trimming the start) went on, not once they stopped.
      expect(appended).toBeLessThan(TOTAL)
      expect(stats.after.records).toBeLessThanOrEqual(420)
      await writer
      const last = await store.compact('r')
      expect(last.after.records).toBe(400) // the window holds 400 distinct keys, each once
      expect((await readAll(store, 'r', 1)).map((m) => m.offset)).toEqual(
        Array.from({ length: 400 }, (_, i) => TOTAL - 400 + i),
      )
    } finally {
      await store.close()
    }
  }, 60_000)

  it('background passes of two processes sending to one topic leave the latest record of every key', async () => {
    const prefix = ctx.store.prefix as string
    const target = parseTarget(ctx.store.target) as { url: string; cluster: boolean }
    const open = (): Promise<Backend> =>
      RedisBackend.connect(target, { prefix, clientId: `bg-${randomBytes(3).toString('hex')}`, compactEveryMs: 20 })
    const [a, b] = await Promise.all([open(), open()])
    try {
      const meta = topicMeta('bg', { keyType: 'string', compact: true, partitions: 2 })
      await a.createTopic(meta)
      // Each process sends to its own partition (w); both compact both in the background meanwhile.
      const latest = new Map<string, string>()
      for (let i = 0; i < 40; i++) {
        const writes = [a, b].map((s, w) => {
          const batch = Array.from({ length: 25 }, (_, j) => ({
            key: `k${(i * 25 + j * 7 + w) % 30}`,
            value: `${w}-${i}-${j}`,
          }))
          for (const r of batch) latest.set(`${w}/${r.key}`, r.value)
          return s.append('bg', w, records(meta, batch), `p${w}`)
        })
        await Promise.all(writes)
      }
      expect((await a.offsets('bg')).map((o) => o.end)).toEqual([1000, 1000])
      await until(
        async () => (await readAll(b, 'bg', 2)).length === latest.size,
        20_000,
        'background passes down to one record per key',
      )
      const after = await readAll(b, 'bg', 2)
      expect(new Map(after.map((m) => [`${m.partition}/${String(m.key)}`, String(m.value)]))).toEqual(latest)
      const stats = await a.lastCompaction('bg')
      expect(stats?.after.records).toBe(latest.size)
    } finally {
      await Promise.all([a.close(), b.close()])
    }
  }, 60_000)
})

/** Every record of a topic's partitions through store readers. */
async function readAll(store: Backend, topic: string, partitions: number): Promise<Message[]> {
  const out: Message[] = []
  for (let p = 0; p < partitions; p++) {
    const r = await store.openReader(topic, p, 0)
    for (let b = await r.read(1000); b.length > 0; b = await r.read(1000)) out.push(...b)
    await r.close()
  }
  return out
}
