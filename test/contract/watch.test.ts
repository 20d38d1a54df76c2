/**
 * Backend contract, watch: appends from this or another instance call `onData`, so a tail that
 * reads on each wake-up sees them; the unsubscribe function is idempotent. The watching instance
 * runs without its safety-net poll (`pollMs` 60 s), so only a real notification can wake it.
 * (That a non-persistent watch does not keep the process alive is not checked here.)
 */
import { describe, expect, it } from 'vitest'
import type { Backend, PartitionReader } from '../../src/backends/backend.js'
import type { Message } from '../../src/core/types.js'
import { Calls, texts, topicMeta } from './fixture.js'
import { kinds, perTest } from './kinds.js'

const NO_POLL = { pollMs: 60_000 }

/** Read on every wake-up until `n` messages came (the tail pattern: read, and wait for `onData` when empty). */
async function tailUntil(r: PartitionReader, calls: Calls, n: number, ms: number): Promise<Message[]> {
  const out: Message[] = []
  const deadline = Date.now() + ms
  while (out.length < n) {
    const seen = calls.count
    const got = await r.read(100)
    out.push(...got)
    if (got.length === 0)
      await calls.after(seen, Math.max(1, deadline - Date.now()), `wake-up with ${out.length} of ${n} messages read`)
  }
  return out
}

describe.each(kinds())('$name: watch', (kind) => {
  kind.hooks()
  const ctx = perTest(kind)

  async function setUp(): Promise<{ watcher: Backend; writer: Backend; reader: PartitionReader }> {
    const watcher = await ctx.fresh(NO_POLL)
    const writer = await ctx.open()
    await watcher.createTopic(topicMeta('t', { partitions: 2 }))
    const reader = await watcher.openReader('t', 1, 0)
    expect(await reader.read(10)).toEqual([])
    return { watcher, writer, reader }
  }

  it('an append from another instance calls onData, and the tail reads it after the wake-up', async () => {
    const { watcher, writer, reader } = await setUp()
    const calls = new Calls()
    const unsubscribe = watcher.watch('t', 1, calls.fn, false)
    const before = calls.count
    await writer.append('t', 1, texts(topicMeta('t'), 'x', 3), 'p')
    await calls.after(before, 5000, 'onData after the other instance appended')
    const got = await tailUntil(reader, calls, 3, 5000)
    expect(got.map((m) => [m.partition, m.offset, m.value])).toEqual([
      [1, 0, 'x0'],
      [1, 1, 'x1'],
      [1, 2, 'x2'],
    ])
    // And again: the watch goes on after the first wake-up.
    await writer.append('t', 1, texts(topicMeta('t'), 'y', 1), 'p')
    expect((await tailUntil(reader, calls, 1, 5000)).map((m) => m.value)).toEqual(['y0'])
    unsubscribe()
    await reader.close()
  })

  it('an append from the same instance calls onData', async () => {
    const { watcher, reader } = await setUp()
    const calls = new Calls()
    const unsubscribe = watcher.watch('t', 1, calls.fn, true)
    const before = calls.count
    await watcher.append('t', 1, texts(topicMeta('t'), 'z', 2), 'p')
    await calls.after(before, 5000, 'onData after this instance appended')
    expect((await tailUntil(reader, calls, 2, 5000)).map((m) => m.value)).toEqual(['z0', 'z1'])
    unsubscribe()
    await reader.close()
  })

  it('many appends in a row: every one is read through wake-ups, none is lost', async () => {
    const { watcher, writer, reader } = await setUp()
    const calls = new Calls()
    const unsubscribe = watcher.watch('t', 1, calls.fn, false)
    const meta = topicMeta('t')
    const writes = (async () => {
      for (let i = 0; i < 30; i++) await writer.append('t', 1, texts(meta, `w${i}.`, 1), 'p')
    })()
    const got = await tailUntil(reader, calls, 30, 10_000)
    await writes
    expect(got.map((m) => m.offset)).toEqual(Array.from({ length: 30 }, (_, i) => i))
    unsubscribe()
    await reader.close()
  })

  it('the unsubscribe function is idempotent and stops the calls; other subscribers go on', async () => {
    const { watcher, writer, reader } = await setUp()
    const gone = new Calls()
    const stays = new Calls()
    const unsubscribe = watcher.watch('t', 1, gone.fn, false)
    const unsubscribeOther = watcher.watch('t', 1, stays.fn, false)
    unsubscribe()
    expect(() => unsubscribe()).not.toThrow()
    const callsAtUnsubscribe = gone.count
    const before = stays.count
    await writer.append('t', 1, texts(topicMeta('t'), 'u', 1), 'p')
    // The subscriber still there is woken and the tail reads the message…
    await stays.after(before, 5000, 'onData of the remaining subscriber')
    expect((await tailUntil(reader, stays, 1, 5000)).map((m) => m.value)).toEqual(['u0'])
    // …while the one that unsubscribed was not called by the same notifications.
    expect(gone.count).toBe(callsAtUnsubscribe)
    unsubscribeOther()
    unsubscribeOther()
    await reader.close()
  })
})
