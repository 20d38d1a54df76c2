// Load and delivery checks shared by the Redis Cluster fault tests (test/faults/cluster-*.test.ts).
import type { Acked } from './checker.js'
import { sleep, within } from './wait.js'
import { ClosedError, type Message, type Twain } from '../../src/index.js'

export interface Load {
  acked: Acked[]
  failures: unknown[]
  /** Per acknowledged send: how long it took (ms) and its partition. */
  latencies: Array<{ partition: number; ms: number }>
  /** Every settled send (acknowledged or failed): its partition, and when it started and settled (performance.now()). */
  settled: Array<{ partition: number; start: number; end: number }>
  /** Appended to every value (after a space) from now on ('' = none). */
  padding: string
  /** The sends under way now: their partition, and when each started (performance.now()). */
  open(): Array<{ partition: number; start: number }>
  /**
   * Stop sending and wait for the sends under way. Every send settles (acknowledged, or failed once
   * the appender's retry window of 30 s has passed): one still open `settleWithinMs` after the stop
   * fails the test with the sends that never settled (partition, how long since each started).
   */
  stop(settleWithinMs?: number): Promise<void>
  /**
   * Wait until `n` more sends than now are acknowledged (or, with `counted` 'settled', settled
   * either way). A bound on progress, not on speed: it fails only when the count does not move for
   * 30 s, the appender's retry window (a loaded machine slows the load, a stuck partition stops
   * it), naming `what`, the count reached and the sends under way.
   */
  more(n: number, what: string, counted?: 'acked' | 'settled'): Promise<void>
}

/** Longer than the appender's retry window (RETRY_FOR_MS, 30 s), after which a send fails. */
const SETTLE_WITHIN_MS = 40_000
/** As long as the appender's retry window: a partition that cannot take a send for longer is stuck. */
const STALL_MS = 30_000

/** Sends with unique ids (`<tag><n>`) from one loop per entry of `lanes` (the partition it sends to) until stopped. */
export function sendLoad(twain: Twain, topic: string, lanes: readonly number[], tag = 'm'): Load {
  const producer = twain.producer<string>(topic)
  const out: Load = {
    acked: [],
    failures: [],
    latencies: [],
    settled: [],
    padding: '',
    open: () => [],
    stop: async () => undefined,
    more: async () => undefined,
  }
  let stopped = false
  let n = 0
  /** The send each lane is waiting on, if any: its id and when it started. */
  const open: Array<{ id: string; start: number } | undefined> = lanes.map(() => undefined)
  const loops = lanes.map(async (partition, lane) => {
    while (!stopped) {
      const id = `${tag}${n++}`
      const t0 = performance.now()
      open[lane] = { id, start: t0 }
      let failed = false
      try {
        const r = await producer.send(partition, out.padding ? `${id} ${out.padding}` : id, { partition })
        out.latencies.push({ partition, ms: performance.now() - t0 })
        out.acked.push({ id, partition: r.partition, offset: r.offset })
      } catch (e) {
        // The instance was closed (a test ending early): the load ends with it.
        if (e instanceof ClosedError) {
          stopped = true
          break
        }
        out.failures.push(e)
        failed = true
      } finally {
        open[lane] = undefined
      }
      out.settled.push({ partition, start: t0, end: performance.now() })
      // A send refused at once must not keep the loop in microtasks: timers, I/O and the test's
      // own timeout run in between.
      if (failed) await new Promise((resolve) => setImmediate(resolve))
    }
  })
  out.open = () => open.flatMap((o, lane) => (o ? [{ partition: lanes[lane] as number, start: o.start }] : []))
  out.more = async (count, what, counted = 'acked') => {
    const now = (): number => (counted === 'acked' ? out.acked.length : out.settled.length)
    const target = now() + count
    let seen = now()
    let movedAt = performance.now()
    while (now() < target) {
      if (now() > seen) {
        seen = now()
        movedAt = performance.now()
      } else if (performance.now() - movedAt > STALL_MS) {
        const at = performance.now()
        const under = out.open().map((o) => `partition ${o.partition} (${Math.round(at - o.start)} ms)`)
        throw new Error(
          `${what}: no send ${counted} for ${STALL_MS} ms, ${seen - (target - count)} of ${count} so far; ${out.failures.length} failed, last: ${String(out.failures.at(-1))}; under way: ${under.join(', ')}`,
        )
      }
      if (stopped) throw new Error(`${what}: the load was stopped (or its instance closed)`)
      await sleep(10)
    }
  }
  out.stop = async (settleWithinMs = SETTLE_WITHIN_MS) => {
    stopped = true
    const settled = await within(Promise.all(loops), settleWithinMs, 'the sends').then(
      () => true,
      () => false,
    )
    if (settled) return
    const now = performance.now()
    const stuck = open.flatMap((o, lane) =>
      o ? [`${o.id} to partition ${lanes[lane]} (started ${Math.round(now - o.start)} ms ago)`] : [],
    )
    throw new Error(
      `${stuck.length} send(s) did not settle within ${settleWithinMs} ms of the load's stop: ${stuck.join(', ')}`,
    )
  }
  return out
}

/** Everything a stream delivers, by partition, in delivery order. */
export interface Collected {
  byPartition: Map<number, Array<{ offset: number; id: string }>>
  count: number
  error: unknown
  done: Promise<void>
}

export function collect(stream: AsyncIterable<Message<string>>, onMessage?: (m: Message<string>) => void): Collected {
  const c: Collected = { byPartition: new Map(), count: 0, error: undefined, done: Promise.resolve() }
  c.done = (async () => {
    try {
      for await (const m of stream) {
        let l = c.byPartition.get(m.partition)
        if (!l) c.byPartition.set(m.partition, (l = []))
        l.push({ offset: m.offset, id: m.value })
        c.count++
        onMessage?.(m)
      }
    } catch (e) {
      c.error = e
    }
  })()
  return c
}

/** Whether every acknowledged send was delivered (by partition and offset). */
export function deliveredAll(c: Collected, acked: readonly Acked[]): boolean {
  const seen = new Set<string>()
  for (const [p, l] of c.byPartition) for (const e of l) seen.add(`${p}@${e.offset}`)
  return acked.every((a) => seen.has(`${a.partition}@${a.offset}`))
}

/**
 * Problems of a delivery that must be exactly once and in order per partition: an offset delivered
 * twice or out of order, a gap, an acknowledged send delivered with another value or not at all.
 */
export function deliveryProblems(
  c: Collected,
  acked: readonly Acked[],
  from: Map<number, number> = new Map(),
): string[] {
  const problems: string[] = []
  const at = new Map<string, string>()
  for (const [p, l] of c.byPartition) {
    let expect = from.get(p) ?? l[0]?.offset ?? 0
    for (const e of l) {
      if (e.offset !== expect) problems.push(`partition ${p}: offset ${e.offset} delivered where ${expect} was next`)
      expect = e.offset + 1
      at.set(`${p}@${e.offset}`, e.id)
    }
  }
  for (const a of acked) {
    const got = at.get(`${a.partition}@${a.offset}`)
    if (got !== a.id)
      problems.push(
        `acked ${a.id} at ${a.partition}@${a.offset}: ${got === undefined ? 'not delivered' : `delivered ${got}`}`,
      )
  }
  return problems
}

/** The p-th percentile (0..100) of some numbers. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0
  const s = [...values].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] as number
}
