// Conformance: fetching is demand-driven (issue 10). A consumer that was created and never iterated
// or polled is a member (DESIGN §3.6) but reads nothing; its first iteration or poll() starts the
// reads. In shared mode (Redis), an idle member therefore holds no entries the live members cannot
// get, and when its last iteration ends what it had fetched and not handed out goes back to the group.
import { describe, expect, it } from 'vitest'
import type { GroupMessage, Twain } from '../../src/index.js'
import { until } from '../helpers/spawn.js'
import { streamKeyOf } from '../helpers/redis-keys.js'
import { backends, perTest } from './backends.js'
import { backendOf } from '../../src/facade/twain.js'

/** Count the partition reads a Twain instance's consumers make (every reader its backend opens). */
function countReads(twain: Twain): { reads: number } {
  const store = backendOf(twain)
  const counter = { reads: 0 }
  const openReader = store.openReader.bind(store)
  store.openReader = async (topic, partition, from) => {
    const r = await openReader(topic, partition, from)
    const read = r.read.bind(r)
    r.read = (max) => {
      counter.reads++
      return read(max)
    }
    return r
  }
  return counter
}

async function fill(twain: Twain, topic: string, count: number, from = 0): Promise<void> {
  await twain
    .producer<string>(topic)
    .sendBatch(Array.from({ length: count }, (_, i) => ({ key: from + i, value: `m${from + i}` })))
}

/** The next `n` messages of an iteration, acked. */
async function take<V>(it: AsyncIterator<GroupMessage<V>>, n: number): Promise<GroupMessage<V>[]> {
  const out: GroupMessage<V>[] = []
  while (out.length < n) {
    const r = await it.next()
    if (r.done) throw new Error(`the iteration ended after ${out.length} of ${n} messages`)
    r.value.ack()
    out.push(r.value)
  }
  return out
}

describe.each(backends())('demand-driven fetching on $name', (kind) => {
  kind.hooks()
  const ctx = perTest(kind)

  it('partitioned: a consumer created and never iterated or polled owns its partitions but reads nothing; poll() starts the reads', async () => {
    await ctx.twain.createTopic('t')
    const idleInstance = await ctx.open()
    const counter = countReads(idleInstance)
    const idle = idleInstance.consumer<string>('t', { group: 'g' })
    await until(() => idle.assignments().length === 1, 5000, 'the idle member to own the partition')
    await fill(ctx.twain, 't', 10)
    // A consumer of another group, woken by the same appends, gets all ten: the idle one would have read by now.
    const other = ctx.twain.consumer<string>('t', { group: 'h' })
    await take(other[Symbol.asyncIterator](), 10)
    await idle.rebalance()
    expect(counter.reads).toBe(0)
    expect(idle.poll()).toBeUndefined() // nothing fetched yet: this poll starts the reads
    let first: GroupMessage<string> | undefined
    await until(() => (first = idle.poll()) !== undefined, 5000, 'a polled message')
    expect(first?.offset).toBe(0)
    first?.ack()
    expect(counter.reads).toBeGreaterThan(0)
  })

  it('partitioned: after the last iteration ends the member stops reading; the next iteration goes on after the last delivered message', async () => {
    await ctx.twain.createTopic('t')
    const memberInstance = await ctx.open()
    const counter = countReads(memberInstance)
    const c = memberInstance.consumer<string>('t', { group: 'g', maxInFlight: 4 })
    await fill(ctx.twain, 't', 3)
    const it1 = c[Symbol.asyncIterator]()
    expect((await take(it1, 3)).map((m) => m.offset)).toEqual([0, 1, 2])
    await it1.return?.()
    await c.rebalance() // a round trip: a read round under way has ended
    const before = counter.reads
    await fill(ctx.twain, 't', 5, 3)
    const other = ctx.twain.consumer<string>('t', { group: 'h' })
    await take(other[Symbol.asyncIterator](), 8)
    await c.rebalance()
    expect(counter.reads - before).toBe(0)
    const it2 = c[Symbol.asyncIterator]()
    expect((await take(it2, 5)).map((m) => m.offset)).toEqual([3, 4, 5, 6, 7])
    await it2.return?.()
  })

  if (!kind.redis) return

  /** Entries pending per consumer name of partition 0's group. */
  async function pendingBy(topic: string, group: string): Promise<Record<string, number>> {
    const admin = kind.keyClient?.()
    if (!admin) throw new Error('no Redis client')
    const rows = (await admin.xpending(await streamKeyOf(ctx.twain, topic, 0), group, '-', '+', 10_000)) as Array<
      [string, string, number, number]
    >
    const out: Record<string, number> = {}
    for (const [, name] of rows) out[name] = (out[name] ?? 0) + 1
    return out
  }

  it('shared: a member created and never iterated holds nothing; the live member next to it gets every message', async () => {
    await ctx.twain.createTopic('t')
    const idle = ctx.twain.consumer<string>('t', { group: 'g', mode: 'shared', name: 'idle' })
    await idle.rebalance() // joined
    await fill(ctx.twain, 't', 50)
    const live = (await ctx.open()).consumer<string>('t', { group: 'g', mode: 'shared', name: 'live' })
    const got = await take(live[Symbol.asyncIterator](), 50)
    expect(new Set(got.map((m) => m.offset)).size).toBe(50)
    await live.commit()
    expect(await pendingBy('t', 'g')).toEqual({})
    expect(idle.assignments()).toEqual([{ topic: 't', partition: 0 }]) // still a member
  })

  it('shared: when its last iteration ends, what a member fetched and never handed out goes back to the group, uncounted', async () => {
    await ctx.twain.createTopic('t')
    await fill(ctx.twain, 't', 20)
    const opts = { group: 'g', mode: 'shared', claimAfterMs: 400 } as const
    const first = ctx.twain.consumer<string>('t', { ...opts, name: 'first' })
    const it1 = first[Symbol.asyncIterator]()
    const mine = await take(it1, 1)
    await it1.return?.()
    await first.commit()
    const live = (await ctx.open()).consumer<string>('t', { ...opts, name: 'live' })
    const got = await take(live[Symbol.asyncIterator](), 19)
    expect(got.map((m) => m.offset).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 20 }, (_, i) => i).filter((o) => o !== mine[0]?.offset),
    )
    expect(got.every((m) => m.deliveryCount === 1)).toBe(true)
    await live.commit()
    expect(await pendingBy('t', 'g')).toEqual({})
  })

  it('shared: a blocked read that returns after the last iteration ended gives its entries back, uncounted', async () => {
    await ctx.twain.createTopic('t')
    const clients = kind.clientList
    if (!clients) throw new Error('no Redis client list')
    // A long claim time: its blocking reads wait up to 5 s.
    const first = ctx.twain.consumer<string>('t', { group: 'g', mode: 'shared', name: 'first', claimAfterMs: 30_000 })
    const it1 = first[Symbol.asyncIterator]()
    const pending = it1.next()
    await until(async () => /name=twainmq:shared .*cmd=xreadgroup/.test(await clients()), 5000, 'a blocked XREADGROUP')
    await it1.return?.()
    expect((await pending).done).toBe(true)
    await fill(ctx.twain, 't', 10) // the blocked read of 'first' gets them
    const live = (await ctx.open()).consumer<string>('t', {
      group: 'g',
      mode: 'shared',
      name: 'live',
      claimAfterMs: 400,
    })
    const got = await take(live[Symbol.asyncIterator](), 10)
    expect(got.map((m) => m.offset).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    expect(got.map((m) => m.deliveryCount)).toEqual(Array(10).fill(1))
    await live.commit()
    expect(await pendingBy('t', 'g')).toEqual({})
  })
})
