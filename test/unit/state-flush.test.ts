// A partition's state flushes (consumer/partitioned/state/state-flush.ts): the writes of several
// inputs in one atomic changelog call, each key's last write only, encoded when the call is made.
import { describe, expect, it } from 'vitest'
import type { Backend, OutputSource, SourcePosition } from '../../src/backends/backend.js'
import type { RecordInput } from '../../src/backends/record.js'
import { ValueKind } from '../../src/core/values.js'
import { TwainError } from '../../src/core/errors.js'
import { cachedHash64 } from '../../src/core/hash64.js'
import { Outputs } from '../../src/consumer/partitioned/outputs.js'
import { OwnedPartition } from '../../src/consumer/partitioned/owned-partition.js'
import type { PartitionHandle } from '../../src/consumer/partitioned/partition-message.js'
import {
  FLUSH_BYTES,
  FLUSH_RECORDS,
  StateFlush,
  type FlushWrite,
} from '../../src/consumer/partitioned/state/state-flush.js'
import { deferredBytes } from '../../src/consumer/partitioned/state/state-store.js'
import type { PreparedRecord } from '../../src/producer/send-record.js'

const handle = (): PartitionHandle => ({ part: new OwnedPartition('in', 0, 1, 0), generation: 0 })

/** A record whose value names what it holds. */
const rec = (key: string, value: unknown): PreparedRecord => ({
  key: Buffer.from(key),
  keyBytes: key.length,
  timestamp: 0,
  kind: ValueKind.Text,
  value: JSON.stringify(value),
  valueBytes: -1,
  partition: 0,
  offset: -1,
})

/** A write of input `offset` (encoded now unless `deferred`). */
const write = (offset: number, key: string, value: unknown, deferred = false, bytes = 10): FlushWrite => ({
  value,
  rec: deferred ? undefined : rec(key, value),
  bytes,
  by: { offset },
  seq: -1,
})

/** A member that records what it was told. */
const member = (told: string[], name: string) => ({
  outputDone: (token: number, failure: unknown) =>
    told.push(`${name}:${token}:${failure === undefined ? 'ok' : (failure as Error).message}`),
})

describe('state flush', () => {
  it("writes each key's last write, named after its input, in input order, and tells its members in order", () => {
    const encoded: string[] = []
    const f = new StateFlush(handle(), (k, v) => (encoded.push(k), rec(k, v)))
    const told: string[] = []
    f.write('a', write(5, 'a', 1, true), 0)
    f.write('b', write(5, 'b', 1), 1)
    f.join(member(told, 'm5'), 7)
    f.write('a', write(6, 'a', 2, true), 0)
    f.join(member(told, 'm6'), 8)
    const { recs, positions } = f.seal()
    expect(f.sealed).toBe(true)
    expect(recs.map((r) => `${(r.key as Buffer).toString()}=${r.value as string}`)).toEqual(['b=1', 'a=2'])
    expect(positions).toEqual([
      { offset: 5, seq: 1 },
      { offset: 6, seq: 0 },
    ])
    // Only the write that is written was encoded, when the call was made.
    expect(encoded).toEqual(['a'])
    f.settle(undefined)
    expect(told).toEqual(['m5:7:ok', 'm6:8:ok'])
  })

  it("leaves out a delete of a key the changelog holds no value for, unless the call's last input made it", () => {
    // The changelog may hold a value for 'old' (restored); 'w1' and 'w2' were never written.
    const logged = new Set(['old'])
    const keys = (f: StateFlush) => f.seal().recs.map((r) => `${(r.key as Buffer).toString()}=${String(r.value)}`)
    const first = new StateFlush(handle(), rec, undefined, logged)
    first.write('w1', write(1, 'w1', 1), 0)
    first.write('w2', write(1, 'w2', 1), 1)
    first.write('w1', write(2, 'w1', null), 0) // made and deleted in one call: nothing to write
    first.write('old', write(2, 'old', null), 1)
    first.write('w2', write(3, 'w2', null), 0) // the last input's: written, so the call names input 3
    expect(keys(first)).toEqual(['old=null', 'w2=null'])
    // Sealed: a value written may be in the changelog from now on, whatever becomes of the call.
    const second = new StateFlush(handle(), rec, undefined, logged)
    second.write('w3', write(4, 'w3', 1), 0)
    second.write('x', write(5, 'x', 1), 0)
    expect(keys(second)).toEqual(['w3=1', 'x=1'])
    second.settle(new Error('refused'))
    expect([...logged].sort()).toEqual(['old', 'w3', 'x'])
    // Stored: its deletes are the changelog's last word ('old' and 'w2' are gone from the set).
    first.settle(undefined)
    expect([...logged].sort()).toEqual(['w3', 'x'])
    // A key a failed call may have written keeps its delete.
    const third = new StateFlush(handle(), rec, undefined, logged)
    third.write('w3', write(6, 'w3', null), 0)
    third.write('old', write(6, 'old', null), 1)
    third.write('y', write(7, 'y', 1), 0)
    expect(keys(third)).toEqual(['w3=null', 'y=1'])
    // Without the set (a caller that keeps none), every delete is written.
    const plain = new StateFlush(handle(), rec)
    plain.write('z', write(1, 'z', null), 0)
    plain.write('y', write(2, 'y', 1), 0)
    expect(keys(plain)).toEqual(['z=null', 'y=1'])
  })

  it('members joining together (carried inputs) are told in order, before and after single joins, and only the first n', () => {
    const told: string[] = []
    const carried = ['c1', 'c2', 'c3', 'stale'].map((n) => member(told, n))
    const tokens = [1, 2, 3, 99]
    const fresh = new StateFlush(handle(), rec)
    fresh.joinAll(carried, tokens, 3)
    fresh.write('a', write(4, 'a', 1), 0)
    fresh.join(member(told, 'm4'), 4)
    fresh.joinAll(carried, tokens, 2)
    // The arrays given are copied: the caller reuses them.
    carried.fill(member(told, 'reused'))
    fresh.settle(undefined)
    expect(told).toEqual(['c1:1:ok', 'c2:2:ok', 'c3:3:ok', 'm4:4:ok', 'c1:1:ok', 'c2:2:ok'])
  })

  it('a failure is reported once and told to every member', () => {
    const reported: unknown[] = []
    const f = new StateFlush(handle(), rec, (e) => reported.push(e))
    const told: string[] = []
    f.write('a', write(1, 'a', 1), 0)
    f.join(member(told, 'm1'), 0)
    f.write('b', write(2, 'b', 1), 0)
    f.join(member(told, 'm2'), 0)
    f.settle(new Error('disk full'))
    expect(reported).toHaveLength(1)
    expect(told).toEqual(['m1:0:disk full', 'm2:0:disk full'])
    expect(f.sealed).toBe(true)
  })

  it('takes writes within its records and bytes; keys it holds already do not count again', () => {
    const f = new StateFlush(handle(), rec)
    const keyed = (k: string, bytes = 10) => ({ ...write(1, k, 1, false, bytes), key: k })
    const rest = (from: number, n: number) =>
      new Map(Array.from({ length: n }, (_, i) => [`k${from + i}`, keyed(`k${from + i}`)]))
    // An empty flush takes a message's writes whatever they are.
    expect(f.fits(keyed('k0'), rest(1, FLUSH_RECORDS + 5), undefined)).toBe(true)
    for (let i = 0; i < FLUSH_RECORDS - 1; i++) f.write(`k${i}`, keyed(`k${i}`), 0)
    f.join(member([], 'm1'), 0)
    expect(f.fits(keyed(`k${FLUSH_RECORDS - 1}`), undefined, undefined)).toBe(true)
    expect(f.fits(keyed(`k${FLUSH_RECORDS - 1}`), rest(FLUSH_RECORDS, 1), undefined)).toBe(false)
    // A mark counts as a record.
    expect(f.fits(keyed(`k${FLUSH_RECORDS - 1}`), undefined, write(1, 'mark', 1))).toBe(false)
    // Writes of keys it holds replace theirs: no record more.
    expect(f.fits(keyed('k0'), rest(1, 500), undefined)).toBe(true)
    const big = new StateFlush(handle(), rec)
    big.write('x', write(1, 'x', 1, false, FLUSH_BYTES - 100), 0)
    big.join(member([], 'm1'), 0)
    expect(big.fits(keyed('y', 100), undefined, undefined)).toBe(true)
    expect(big.fits(keyed('y', 101), undefined, undefined)).toBe(false)
    expect(big.fits(keyed('x', FLUSH_BYTES), undefined, undefined)).toBe(true)
  })

  it('through a lane: members join until the lane takes the flush; one failing for good fails the ones queued behind', async () => {
    const calls: Array<{ positions: SourcePosition[]; answer: (e?: Error) => void }> = []
    const store = {
      getTopic: async () => ({ createdAt: 0 }),
      appendSourced: (
        _t: string,
        _p: number,
        records: readonly RecordInput[],
        _id: string,
        _s: OutputSource,
        positions: readonly SourcePosition[],
      ) =>
        new Promise((resolve, reject) =>
          calls.push({
            positions: [...positions],
            answer: (e) => (e ? reject(e) : resolve(records.map((_, i) => ({ offset: i, duplicate: false })))),
          }),
        ),
    } as unknown as Backend
    const o = new Outputs(store, 'g', 'p', { validate: (_t, v) => Promise.resolve(v) }, cachedHash64())
    const h = handle()
    const told: string[] = []
    const first = new StateFlush(h, rec)
    first.write('a', write(1, 'a', 1), 0)
    first.join(member(told, 'm1'), 0)
    o.queueFlush('log', 0, first)
    // Before the lane takes it, the next input joins it.
    first.write('a', write(2, 'a', 2), 0)
    first.join(member(told, 'm2'), 0)
    const tick = async (): Promise<void> => {
      for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r))
    }
    await tick()
    expect(calls.map((c) => c.positions)).toEqual([[{ offset: 2, seq: 0 }]])
    expect(first.sealed).toBe(true)
    const second = new StateFlush(h, rec)
    second.write('b', write(3, 'b', 1), 0)
    second.join(member(told, 'm3'), 0)
    o.queueFlush('log', 0, second)
    calls[0]?.answer(new TwainError('refused for good'))
    await tick()
    expect(calls).toHaveLength(1)
    expect(told).toEqual(['m1:0:refused for good', 'm2:0:refused for good', 'm3:0:refused for good'])
  })
})

describe('deferredBytes', () => {
  it('bounds the values whose encoding cannot fail or change, and refuses the others', () => {
    expect(deferredBytes(1, false)).toBeGreaterThanOrEqual(JSON.stringify(-1.2345678901234567e-308).length)
    expect(deferredBytes(Number.NaN, false)).toBe(-1)
    expect(deferredBytes(Infinity, false)).toBe(-1)
    expect(deferredBytes(true, false)).toBe(5)
    expect(deferredBytes('ab', false)).toBeGreaterThanOrEqual(Buffer.byteLength(JSON.stringify('ab')))
    expect(deferredBytes('x'.repeat(513), false)).toBe(-1)
    expect(deferredBytes(10n, false)).toBe(-1)
    // An object only when its writer says it is its own, and only flat.
    const w = { a: 3, m: 1767225612345, n: 2 }
    expect(deferredBytes(w, false)).toBe(-1)
    expect(deferredBytes(w, true)).toBeGreaterThanOrEqual(JSON.stringify(w).length)
    expect(deferredBytes({ a: { b: 1 } }, true)).toBe(-1)
    expect(deferredBytes({ a: Number.NaN }, true)).toBe(-1)
    expect(deferredBytes({ a: undefined }, true)).toBe(-1)
    expect(deferredBytes(new (class P {})(), true)).toBe(-1)
    expect(deferredBytes(Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`f${i}`, i])), true)).toBe(-1)
    expect(deferredBytes(null, true)).toBe(-1)
  })
})
