/**
 * Laws of the operators in `twainmq/operators` (and `twainmq/rx`), checked on fake messages with
 * random sizes, keys, timings and failure plans.
 */
import fc from 'fast-check'
import { from as rxFrom, lastValueFrom, toArray } from 'rxjs'
import { describe, expect, it } from 'vitest'
import { KeyLanes } from '../src/operators/key-lanes.js'
import { ack, batch, pipe, retry } from '../src/operators/index.js'
import { ackRx } from '../src/operators/rx/index.js'
import { laneOf } from '../src/operators/settleable.js'
import { fakeMessage, settlements, type FakeMessage } from '../test/unit/operators/fakes.js'
import { sleep } from '../test/helpers/wait.js'

/** How long something takes: nothing, a microtask, a macrotask turn, or a 1-2 ms timer. */
type Delay = 0 | 1 | 2 | 3
const delayArb: fc.Arbitrary<Delay> = fc.constantFrom<Delay>(0, 1, 2, 3)

async function wait(d: Delay): Promise<void> {
  if (d === 0) return
  if (d === 1) return Promise.resolve()
  if (d === 2) return new Promise((r) => setImmediate(r))
  return sleep(1)
}

/** An async source yielding `items`, waiting `delays[i]` before each. */
async function* paced<T>(items: readonly T[], delays: readonly Delay[]): AsyncGenerator<T> {
  for (let i = 0; i < items.length; i++) {
    await wait(delays[i % Math.max(1, delays.length)] ?? 0)
    yield items[i] as T
  }
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = []
  for await (const v of it) out.push(v)
  return out
}

const keyArb = fc.constantFrom<unknown>('a', 'b', 'c', 1, 1n, 2n ** 64n - 1n, undefined)

describe('operator laws', () => {
  it('batch preserves order and every batch has 1..size items', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 40 }),
        fc.integer({ min: 1, max: 8 }),
        fc.constantFrom<number | undefined>(undefined, 0, 1, 3),
        fc.array(delayArb, { minLength: 1, maxLength: 10 }),
        async (n, size, maxWaitMs, delays) => {
          const msgs = Array.from({ length: n }, (_, i) => fakeMessage(i))
          const batches = await collect(pipe(paced(msgs, delays), batch({ size, maxWaitMs })))
          for (const b of batches) {
            expect(b.length).toBeGreaterThanOrEqual(1)
            expect(b.length).toBeLessThanOrEqual(size)
          }
          expect(batches.flatMap((b) => b.map((m) => m.id))).toEqual(msgs.map((m) => m.id))
          if (maxWaitMs === undefined) {
            // without a deadline only the last batch may be partial
            expect(batches.slice(0, -1).every((b) => b.length === size)).toBe(true)
          }
          expect(msgs.every((m) => settlements(m) === 0)).toBe(true) // batch itself settles nothing
        },
      ),
      { numRuns: 120 },
    )
  })

  it('retry never calls the handler more than attempts times and settles each message exactly once', async () => {
    /** Per message: how many attempts fail, and whether the failure is one retryIf rejects. */
    const planArb = fc.record({ failures: fc.integer({ min: 0, max: 6 }), fatal: fc.boolean(), async: fc.boolean() })
    await fc.assert(
      fc.asyncProperty(
        fc.array(planArb, { maxLength: 12 }),
        fc.integer({ min: 1, max: 5 }),
        fc.boolean(),
        async (plans, attempts, deadLetter) => {
          const msgs = plans.map((_, i) => fakeMessage(i))
          const calls = new Map<number, number>()
          const handler = async (m: FakeMessage, attempt: number) => {
            calls.set(m.id, (calls.get(m.id) ?? 0) + 1)
            expect(attempt).toBe(calls.get(m.id))
            const plan = plans[m.id]!
            if (plan.async) await Promise.resolve()
            if (attempt <= plan.failures)
              throw Object.assign(new Error(`m${m.id} attempt ${attempt}`), { fatal: plan.fatal })
          }
          const results = await collect(
            pipe(
              paced(msgs, [0, 1, 2]),
              retry(handler, {
                attempts,
                deadLetter,
                backoff: { initialMs: 0, maxMs: 0 },
                retryIf: (e) => !(e as { fatal: boolean }).fatal,
              }),
            ),
          )
          expect(results.map((r) => r.message.id)).toEqual(msgs.map((m) => m.id))
          for (const r of results) {
            const plan = plans[r.message.id]!
            const m = r.message
            const n = calls.get(m.id) ?? 0
            // model: the first success, or the first non-retryable failure, or the last allowed attempt
            const expectedCalls = plan.failures === 0 ? 1 : plan.fatal ? 1 : Math.min(plan.failures + 1, attempts)
            const expectedOk = plan.failures < expectedCalls
            expect(n).toBeLessThanOrEqual(attempts)
            expect(n).toBe(expectedCalls)
            expect(r.attempts).toBe(n)
            expect(r.ok).toBe(expectedOk)
            expect(settlements(m)).toBe(1)
            if (r.ok) expect(m.acks).toBe(1)
            else {
              expect(deadLetter ? m.terms : m.nacks).toBe(1)
              expect((r as { error: Error }).error.message).toBe(`m${m.id} attempt ${n}`)
              if (deadLetter) expect(m.termReasons).toEqual([`m${m.id} attempt ${n}`])
            }
          }
        },
      ),
      { numRuns: 120 },
    )
  })

  /** Run `ack`-like processing and record, per message, when its handler started and ended. */
  async function runAck(
    keys: unknown[],
    durations: Delay[],
    concurrency: number,
    perKey: boolean,
    via: 'iterable' | 'rx',
  ): Promise<{ msgs: FakeMessage[]; events: Array<[string, number]>; emitted: FakeMessage[]; maxRunning: number }> {
    const msgs = keys.map((k, i) => fakeMessage(i, k))
    const events: Array<[string, number]> = []
    let running = 0
    let maxRunning = 0
    const handler = async (m: FakeMessage) => {
      events.push(['start', m.id])
      maxRunning = Math.max(maxRunning, ++running)
      await wait(durations[m.id % durations.length] ?? 0)
      await wait(durations[(m.id + 1) % durations.length] ?? 0)
      running--
      events.push(['end', m.id])
    }
    const emitted =
      via === 'iterable'
        ? await collect(pipe(paced(msgs, durations), ack(handler, { concurrency, perKey })))
        : await lastValueFrom(rxFrom(msgs).pipe(ackRx(handler, { concurrency, perKey }), toArray()))
    return { msgs, events, emitted, maxRunning }
  }

  function expectPerKeyOrder(r: Awaited<ReturnType<typeof runAck>>, concurrency: number): void {
    const { msgs, events, emitted, maxRunning } = r
    expect(maxRunning).toBeLessThanOrEqual(concurrency)
    expect(emitted.map((m) => m.id).sort((a, b) => a - b)).toEqual(msgs.map((m) => m.id))
    expect(msgs.every((m) => m.acks === 1 && m.nacks === 0 && m.terms === 0)).toBe(true)
    const byLane = new Map<string, number[]>()
    for (const m of msgs) {
      const lane = laneOf(m.key)
      if (lane !== undefined) byLane.set(lane, [...(byLane.get(lane) ?? []), m.id])
    }
    const at = (kind: string, id: number) => events.findIndex(([k, i]) => k === kind && i === id)
    for (const ids of byLane.values()) {
      // handlers of one key start in source order, each after the previous one ended...
      for (let i = 1; i < ids.length; i++) expect(at('start', ids[i]!)).toBeGreaterThan(at('end', ids[i - 1]!))
      // ...and the messages come out in source order
      const out = emitted.filter((m) => ids.includes(m.id)).map((m) => m.id)
      expect(out).toEqual(ids)
    }
  }

  const ackCase = fc.tuple(
    fc.array(keyArb, { maxLength: 25 }),
    fc.array(delayArb, { minLength: 1, maxLength: 8 }),
    fc.integer({ min: 1, max: 5 }),
  )

  it('ack with concurrency keeps per-key order', async () => {
    await fc.assert(
      fc.asyncProperty(ackCase, async ([keys, durations, concurrency]) => {
        expectPerKeyOrder(await runAck(keys, durations, concurrency, true, 'iterable'), concurrency)
      }),
      { numRuns: 100 },
    )
  })

  it('ackRx with concurrency keeps per-key order', async () => {
    await fc.assert(
      fc.asyncProperty(ackCase, async ([keys, durations, concurrency]) => {
        expectPerKeyOrder(await runAck(keys, durations, concurrency, true, 'rx'), concurrency)
      }),
      { numRuns: 60 },
    )
  })

  it('ack with perKey: false never runs more than concurrency handlers and acks every message once', async () => {
    await fc.assert(
      fc.asyncProperty(ackCase, async ([keys, durations, concurrency]) => {
        const r = await runAck(keys, durations, concurrency, false, 'iterable')
        expect(r.maxRunning).toBeLessThanOrEqual(concurrency)
        expect(r.msgs.every((m) => m.acks === 1 && settlements(m) === 1)).toBe(true)
        expect(r.emitted).toHaveLength(keys.length)
      }),
      { numRuns: 60 },
    )
  })

  it('KeyLanes runs at most `limit` items, never two of one lane at once, each lane in push order', () => {
    // commands: push an item of a lane, or finish the i-th running item
    const cmdArb = fc.oneof(fc.record({ push: fc.constantFrom('a', 'b', 'c', 'd') }), fc.record({ finish: fc.nat() }))
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 4 }), fc.array(cmdArb, { maxLength: 60 }), (limit, cmds) => {
        type Item = { lane: string; seq: number }
        const lanes = new KeyLanes<Item>(limit, (i) => i.lane)
        const running: Item[] = []
        const pushed = new Map<string, number>()
        const started = new Map<string, number[]>()
        const start = () => {
          for (const item of lanes.take()) {
            expect(running.some((r) => r.lane === item.lane)).toBe(false)
            running.push(item)
            started.set(item.lane, [...(started.get(item.lane) ?? []), item.seq])
          }
          expect(running.length).toBeLessThanOrEqual(limit)
          expect(lanes.running).toBe(running.length)
        }
        for (const c of cmds) {
          if ('push' in c) {
            const seq = pushed.get(c.push) ?? 0
            pushed.set(c.push, seq + 1)
            lanes.push({ lane: c.push, seq })
          } else if (running.length > 0) {
            const [item] = running.splice(c.finish % running.length, 1)
            lanes.finish(item!)
          }
          start()
        }
        // drain
        while (running.length > 0) {
          lanes.finish(running.shift()!)
          start()
        }
        expect(lanes.waiting).toBe(0)
        for (const [lane, seqs] of started) expect(seqs).toEqual(Array.from({ length: pushed.get(lane)! }, (_, i) => i))
      }),
      { numRuns: 300 },
    )
  })
})
