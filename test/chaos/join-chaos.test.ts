// A windowed stream–stream join under kill -9 (`joinStreams({ withinMs: 1000, latenessMs: 500 })`,
// README "Stream–stream joins"), on the file backend, on Redis and on a Redis Cluster. The test
// process writes orders (ids 0..N-1, users u0..u99, 10 ms apart in event time give or take
// 240 ms, one in 100 5 s late) to 'orders' and, for two ids in three, a payment of the same user
// 100–500 ms after its order (one in 100 5 s late) to 'payments', both of 4 partitions, at a
// steady pace. Join children (join-child.ts) pair them; every 1–3 s one is killed with SIGKILL and
// replaced, and part of the time two run at once (rebalances). Specified: the join topic holds
// every order and payment once; 'paid' holds exactly the pairs of a model that runs each side's
// partition in log order (an order and a payment of one user whose event times are at most
// 1000 ms apart, neither behind its side's watermark: its largest event time before, less 500 ms),
// each once; 'late' holds exactly the model's late records, each once.
import { describe, expect, it } from 'vitest'
import type { Twain } from '../../src/index.js'
import { clusterTarget, fileTarget, redisTarget, type ChaosTarget } from '../helpers/chaos-targets.js'
import { chaosFixture, ChildPool, drainUntil, MIN_WORKING_KILLS, pace, stormWhile } from '../helpers/child-pool.js'

const PARTITIONS = 4
const USERS = 100
const BATCH = 50
const WITHIN = 1000
const LATENESS = 500
const BASE = Date.UTC(2026, 0, 1)

const { children, cleanups } = chaosFixture()

/** Order `id`'s event time: 10 ms apart, ±240 ms of disorder (within the lateness), one in 100 5 s late. */
const orderTime = (id: number): number => BASE + id * 10 + ((id * 7919) % 481) - 240 - (id % 100 === 50 ? 5000 : 0)
/** Whether order `id` has a payment: two in three. */
const paid = (id: number): boolean => id % 3 !== 0
/**
 * Payment `id`'s event time: 100 to 500 ms after its order's (before the order's disorder), so it
 * pairs with its order, and with the user's next order (1000 ms later, ±240 ms) when that is near
 * enough; one in 100 5 s late.
 */
const paymentTime = (id: number): number =>
  BASE + id * 10 + 300 + ((id * 31) % 401) - 200 - (id % 100 === 77 ? 5000 : 0)
const user = (id: number): string => `u${id % USERS}`

interface Rec {
  side: 'left' | 'right'
  id: number
  t: number
  partition: number
  offset: number
}

/** Each side's records that are late: below the largest event time of their side's partition before them, less the lateness. */
function lateOf(recs: readonly Rec[]): Set<Rec> {
  const late = new Set<Rec>()
  for (const side of ['left', 'right'] as const)
    for (let p = 0; p < PARTITIONS; p++) {
      let max = -Infinity
      for (const r of recs.filter((x) => x.side === side && x.partition === p).sort((a, b) => a.offset - b.offset)) {
        if (r.t < max - LATENESS) late.add(r)
        max = Math.max(max, r.t)
      }
    }
  return late
}

/** The pairs `<order id>+<payment id>`: one user, event times at most WITHIN apart, neither late. */
function pairsOf(recs: readonly Rec[], late: Set<Rec>): Set<string> {
  const byUser = new Map<string, { left: Rec[]; right: Rec[] }>()
  for (const r of recs) {
    if (late.has(r)) continue
    const u = byUser.get(user(r.id)) ?? { left: [], right: [] }
    u[r.side].push(r)
    byUser.set(user(r.id), u)
  }
  const out = new Set<string>()
  for (const { left, right } of byUser.values())
    for (const o of left) for (const p of right) if (Math.abs(o.t - p.t) <= WITHIN) out.add(`${o.id}+${p.id}`)
  return out
}

/** How often each value of `topic` is stored (with its header `x-twain-join` when `bySide`). */
async function counted(twain: Twain, topic: string, bySide = false): Promise<Map<string, number>> {
  const n = new Map<string, number>()
  for await (const m of twain.history<string, string>(topic)) {
    const k = bySide ? `${m.headers['x-twain-join']} ${m.value}` : m.value
    n.set(k, (n.get(k) ?? 0) + 1)
  }
  return n
}

/** What differs between the values stored (with their counts) and the values wanted once each. */
function differences(
  got: Map<string, number>,
  want: Set<string>,
): { missing: string[]; doubled: string[]; extra: string[] } {
  return {
    missing: [...want].filter((k) => !got.has(k)),
    doubled: [...got].filter(([k, n]) => want.has(k) && n > 1).map(([k]) => k),
    extra: [...got.keys()].filter((k) => !want.has(k)),
  }
}

const cases: Array<{ name: string; orders: number; rate: number; setup: () => Promise<ChaosTarget> }> = [
  { name: 'file', orders: 4000, rate: 400, setup: () => fileTarget(cleanups, 'twainmq-join-chaos-') },
  { name: 'Redis', orders: 3000, rate: 300, setup: () => redisTarget(cleanups) },
  { name: 'Redis Cluster', orders: 2000, rate: 200, setup: () => clusterTarget(cleanups) },
]

describe.each(cases)('$name: a stream–stream join under a SIGKILL storm', (c) => {
  it(`stores each pair of at least ${c.orders} orders and their payments once, as the model has them, and each late record once`, async () => {
    const { target, options, twain } = await c.setup()
    await twain.createTopic('orders', { partitions: PARTITIONS, keyType: 'string' })
    await twain.createTopic('payments', { partitions: PARTITIONS, keyType: 'string' })
    await twain.createTopic('paid', { partitions: 2, keyType: 'string' })
    await twain.createTopic('late', { partitions: 1, keyType: 'string' })
    const pool = new ChildPool('join-child.ts', [target, JSON.stringify(options)], children)

    const recs: Rec[] = []
    const orders = twain.producer<string, string>('orders')
    const payments = twain.producer<string, string>('payments')
    const produced = (async () => {
      const t0 = performance.now()
      // At least `orders`, and on until the storm has killed enough working children.
      for (
        let from = 0;
        from < c.orders || (pool.workingKills < MIN_WORKING_KILLS && from < 4 * c.orders);
        from += BATCH
      ) {
        const ids = Array.from({ length: BATCH }, (_, i) => from + i)
        const pids = ids.filter(paid)
        const [o, p] = await Promise.all([
          orders.sendBatch(ids.map((id) => ({ key: user(id), value: String(id), timestamp: orderTime(id) }))),
          payments.sendBatch(pids.map((id) => ({ key: user(id), value: String(id), timestamp: paymentTime(id) }))),
        ])
        o.forEach((m, i) => {
          const id = ids[i] as number
          recs.push({ side: 'left', id, t: orderTime(id), partition: m.partition, offset: m.offset })
        })
        p.forEach((m, i) => {
          const id = pids[i] as number
          recs.push({ side: 'right', id, t: paymentTime(id), partition: m.partition, offset: m.offset })
        })
        await pace(t0, from + BATCH, c.rate)
      }
    })()
    await stormWhile(pool, produced) // a failed write fails the test here

    // One child left runs until both groups committed everything: the copier both topics, the
    // joiner the join topic's every record.
    const inputs = recs.length
    let seen = ''
    const code = await drainUntil(
      pool,
      async () => {
        const copier = await twain.describeGroup('pay-in')
        const joiner = await twain.describeGroup('pay')
        const committed = (d: typeof copier) => d.topics.reduce((n, t) => n + t.committed, 0)
        seen = `copier ${committed(copier)}/${inputs}, joiner ${joiner.topics.map((t) => `${t.committed}/${t.end}`).join(' ')}`
        return (
          committed(copier) === inputs &&
          copier.topics.every((t) => t.committed === t.end) &&
          joiner.topics.length === PARTITIONS &&
          joiner.topics.every((t) => t.committed === t.end) &&
          committed(joiner) >= inputs
        )
      },
      'both groups to commit every record',
      () => seen,
    )
    expect(code).toBe(0)

    const late = lateOf(recs)
    const copies = differences(await counted(twain, 'pay-join', true), new Set(recs.map((r) => `${r.side} ${r.id}`)))
    const pairs = differences(await counted(twain, 'paid'), pairsOf(recs, late))
    const lates = differences(await counted(twain, 'late', true), new Set([...late].map((r) => `${r.side} ${r.id}`)))
    const wantPairs = pairsOf(recs, late).size
    const errors = pool.linesStarting('# error')
    const shown = (d: ReturnType<typeof differences>) =>
      `missing ${d.missing.length} ${d.missing.slice(0, 3).join(', ')}; doubled ${d.doubled.length} ${d.doubled.slice(0, 3).join(', ')}; extra ${d.extra.length} ${d.extra.slice(0, 3).join(', ')}`
    const info =
      `${c.name}: ${inputs} records, ${wantPairs} pairs, ${late.size} late; ${pool.kills} SIGKILLs (${pool.workingKills} of working children), ${pool.all.length} children; ` +
      `${errors.length} error lines${errors[0] ? ` (e.g. ${errors[0]})` : ''}; copies: ${shown(copies)}; pairs: ${shown(pairs)}; late: ${shown(lates)}`
    expect(pool.workingKills, info).toBeGreaterThanOrEqual(MIN_WORKING_KILLS)
    expect(late.size, info).toBeGreaterThan(0)
    expect(wantPairs, info).toBeGreaterThan(inputs / 4)
    const count = (d: ReturnType<typeof differences>) => d.missing.length + d.doubled.length + d.extra.length
    expect({ copies: count(copies), pairs: count(pairs), late: count(lates) }, info).toEqual({
      copies: 0,
      pairs: 0,
      late: 0,
    })
  }, 300_000)
})
