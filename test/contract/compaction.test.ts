/**
 * Backend contract, compacted topics (`TopicMeta.compact`, `compact`, `lastCompaction`): a pass
 * keeps every key's latest record at its offset, readers step over the gaps (also a reader that
 * was already reading), tombstones go once older than `tombstoneRetentionMs`, idempotent sends
 * stay deduplicated. Implementations without compaction assert their documented refusal.
 */
import { until } from '../helpers/wait.js'
import { describe, expect, it } from 'vitest'
import type { Backend, TopicMeta } from '../../src/backends/backend.js'
import { ID_HEADER, type RecordInput } from '../../src/backends/record.js'
import { InvalidArgumentError } from '../../src/core/errors.js'
import type { Message } from '../../src/core/types.js'
import { readAll, records, topicMeta, within } from './fixture.js'
import { kinds, perTest, type Kind } from './kinds.js'

const DAY = 86_400_000

/** A compacted topic's configuration. */
const compacted = (name: string, tombstoneRetentionMs = DAY): TopicMeta =>
  topicMeta(name, { compact: true, tombstoneRetentionMs })

/** One record of key `key` (a `null` value: a tombstone) at `timestamp`. */
function update(meta: TopicMeta, key: number, value: string | null, timestamp?: number): RecordInput[] {
  return records(meta, [{ key, value: value as string }], timestamp)
}

/** `rounds` updates of each of `keys` keys, one append each, interleaved: value `k<key>-<round>`. */
async function churn(b: Backend, meta: TopicMeta, keys: number, rounds: number): Promise<void> {
  for (let r = 0; r < rounds; r++)
    for (let k = 0; k < keys; k++) await b.append(meta.name, 0, update(meta, k, `k${k}-${r}`), 'p')
}

/** Each key's latest message among `all`. */
function latestOf(all: readonly Message[]): Map<unknown, Message> {
  const m = new Map<unknown, Message>()
  for (const msg of all) m.set(msg.key, msg)
  return m
}

/** What an implementation without compaction answers, asserted (the test then has nothing more to check there). */
async function refused(kind: Kind, b: Backend, name: string): Promise<boolean> {
  if (kind.caps.compaction === 'passes') return false
  const e = await b.createTopic(compacted(name)).catch((err: unknown) => err)
  expect(e).toBeInstanceOf(InvalidArgumentError)
  expect((e as Error).message).toMatch(/compact/)
  return true
}

describe.each(kinds())('$name: compacted topics', (kind) => {
  kind.hooks()
  const ctx = perTest(kind)

  it('compact() of a topic that is not compacted is refused with InvalidArgumentError; lastCompaction is undefined', async () => {
    const b = await ctx.fresh()
    const meta = topicMeta('plain')
    await b.createTopic(meta)
    await b.append('plain', 0, update(meta, 1, 'a'), 'p')
    const e = await b.compact('plain').catch((err: unknown) => err)
    expect(e).toBeInstanceOf(InvalidArgumentError)
    expect((e as Error).message).toContain('"plain"')
    expect(await b.lastCompaction('plain')).toBeUndefined()
  })

  it(
    {
      passes: 'createTopic stores compact and tombstoneRetentionMs',
      refused: 'createTopic with compact is refused with InvalidArgumentError naming the option',
    }[kind.caps.compaction],
    async () => {
      const b = await ctx.fresh()
      if (await refused(kind, b, 'c')) return
      await b.createTopic(compacted('c', 5000))
      const meta = await (await ctx.open()).getTopic('c')
      expect(meta.compact).toBe(true)
      expect(meta.tombstoneRetentionMs).toBe(5000)
    },
  )

  it('a pass keeps each key its latest record at its offset; readers step over the gaps', async () => {
    const b = await ctx.fresh({ segmentBytes: 1024 })
    if (await refused(kind, b, 'c')) return
    const meta = compacted('c')
    await b.createTopic(meta)
    expect(await b.lastCompaction('c')).toBeUndefined()
    await churn(b, meta, 3, 30)
    const all = await readAll(b, 'c') // background passes may have removed some already
    const latest = latestOf(all)
    expect([...latest.keys()].sort()).toEqual([0, 1, 2])
    const stats = await b.compact('c')
    expect(stats.after.records).toBe(3)
    expect(stats.before.records).toBeGreaterThanOrEqual(3)
    expect(stats.after.bytes).toBeLessThanOrEqual(stats.before.bytes)
    const last = await (await ctx.open()).lastCompaction('c')
    expect(last?.after).toEqual(stats.after)
    expect(last?.before).toEqual(stats.before)

    const left = await readAll(b, 'c')
    expect(left.map((m) => [m.offset, m.key, m.value])).toEqual(
      [...latest.values()].sort((x, y) => x.offset - y.offset).map((m) => [m.offset, m.key, m.value]),
    )
    expect(await b.offsets('c')).toEqual([{ partition: 0, start: expect.any(Number) as number, end: 90 }])
    // A reader asked for a removed offset starts at the next present one.
    const firstKept = left[0] as Message
    const fromGap = await readAll(b, 'c', firstKept.offset - 1)
    expect(fromGap.map((m) => m.offset)).toEqual(left.map((m) => m.offset))
    expect((await readAll(b, 'c', 1)).map((m) => m.offset)).toEqual(left.map((m) => m.offset))
    // Offsets go on from the end: none is reused.
    expect(await b.append('c', 0, update(meta, 0, 'next'), 'p')).toBe(90)
    expect((await readAll(b, 'c')).map((m) => m.offset)).toEqual([...left.map((m) => m.offset), 90])
  })

  it('a reader crosses any number of segments a pass emptied', async () => {
    const b = await ctx.fresh({ segmentBytes: 1024 })
    if (await refused(kind, b, 'c')) return
    const meta = compacted('c')
    await b.createTopic(meta)
    await churn(b, meta, 1, 1500) // ~100 segments of one key's updates: all but the last emptied
    await b.compact('c')
    expect((await readAll(b, 'c')).map((m) => [m.offset, m.value])).toEqual([[1499, 'k0-1499']])
    expect((await readAll(b, 'c', 700)).map((m) => m.offset)).toEqual([1499])
  }, 60_000)

  it('a reader reading while a pass runs keeps reading: every latest value, offsets only growing', async () => {
    const b = await ctx.fresh({ segmentBytes: 1024 })
    if (await refused(kind, b, 'c')) return
    const meta = compacted('c')
    await b.createTopic(meta)
    await churn(b, meta, 4, 25)
    const latest = latestOf(await readAll(b, 'c'))
    const r = await b.openReader('c', 0, 0)
    try {
      const seen: Message[] = [...(await within(r.read(5), 5000, 'first read'))]
      await b.compact('c')
      for (;;) {
        const got = await within(r.read(7), 5000, 'read after the pass')
        if (got.length === 0) break
        seen.push(...got)
      }
      const offsets = seen.map((m) => m.offset)
      expect(offsets).toEqual([...offsets].sort((x, y) => x - y))
      expect(new Set(offsets).size).toBe(offsets.length)
      for (const m of latest.values())
        expect(seen.find((s) => s.offset === m.offset)).toMatchObject({ key: m.key, value: m.value })
    } finally {
      await r.close()
    }
  })

  it('a tombstone stays tombstoneRetentionMs after it was stored, whatever its timestamp, and is removed after', async () => {
    const b = await ctx.fresh()
    if (await refused(kind, b, 'c')) return
    const meta = compacted('c', 60_000)
    await b.createTopic(meta)
    const old = Date.now() - 120_000
    await b.append('c', 0, update(meta, 1, 'one', old - 1), 'p')
    await b.append('c', 0, update(meta, 1, null, old), 'p') // an old event time, stored now: kept
    await b.append('c', 0, update(meta, 2, 'two'), 'p')
    await b.append('c', 0, update(meta, 2, null), 'p')
    await b.append('c', 0, update(meta, 3, 'three'), 'p')
    await b.compact('c')
    const left = await readAll(b, 'c')
    expect(left.map((m) => [m.offset, m.key, m.value])).toEqual([
      [1, 1, null],
      [3, 2, null],
      [4, 3, 'three'],
    ])
    // A short retention: passes remove the tombstones once it has passed since they were stored.
    const short = compacted('d', 200)
    await b.createTopic(short)
    await b.append('d', 0, update(short, 1, 'one'), 'p')
    await b.append('d', 0, update(short, 1, null), 'p')
    await b.append('d', 0, update(short, 2, 'two'), 'p')
    await until(
      async () => {
        await b.compact('d')
        const rest = await readAll(b, 'd')
        return rest.length === 1 && rest[0]?.offset === 2 && rest[0]?.value === 'two'
      },
      20_000,
      'the tombstone removed once its retention passed',
    )
  })

  it('an idempotent send is still recognised after a pass removed its record’s key history', async () => {
    const b = await ctx.fresh()
    if (await refused(kind, b, 'c')) return
    const meta = compacted('c')
    await b.createTopic(meta)
    const withId = records(meta, [{ key: 1, value: 'first', headers: { [ID_HEADER]: 'send-a' } }])
    expect(await b.appendIdempotent('c', 0, withId, 'p', 600_000)).toEqual([{ offset: 0, duplicate: false }])
    await b.append('c', 0, update(meta, 1, 'second'), 'p')
    await b.compact('c')
    const other = await ctx.open() // a process that starts after the pass reads the ids back from the log
    expect(await other.appendIdempotent('c', 0, withId, 'p', 600_000)).toEqual([{ offset: 0, duplicate: true }])
    expect((await readAll(other, 'c')).map((m) => m.value).at(-1)).toBe('second')
  })

  it('a deleted key never comes back: an expired tombstone stays while an older record of its key is kept for dedup', async () => {
    const b = await ctx.fresh()
    if (await refused(kind, b, 'c')) return
    const meta = compacted('c', 100)
    await b.createTopic(meta)
    const withId = records(meta, [{ key: 1, value: 'first', headers: { [ID_HEADER]: 'send-a' } }])
    await b.appendIdempotent('c', 0, withId, 'p', 600_000)
    await b.append('c', 0, update(meta, 1, null), 'p')
    await b.append('c', 0, update(meta, 2, 'other'), 'p')
    // Passes over ten times the retention: after each, the key's last word is still its deletion.
    const seen = async () => (await readAll(b, 'c')).filter((m) => m.key === 1).map((m) => m.value)
    const t0 = Date.now()
    await until(
      async () => {
        await b.compact('c')
        expect((await seen()).at(-1) ?? null).toBeNull()
        return Date.now() - t0 > 1000
      },
      30_000,
      'passes over ten times the tombstone retention',
    )
  })
})
