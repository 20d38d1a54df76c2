// A run of `windowed()`'s messages (consumer/partitioned/windows/window-run.ts, decision 227): a
// message's writes in a layer of its own over the run's, taken into the run only within one
// message's limits and when every value can wait to be encoded, and the run's writes made by its
// last message.
import { describe, expect, it } from 'vitest'
import type { Key } from '../../src/core/types.js'
import type { ProcessorMessageImpl } from '../../src/consumer/partitioned/processor-message.js'
import { deferredBytes, MAX_STATE_BYTES, MAX_STATE_WRITES } from '../../src/consumer/partitioned/state/state-store.js'
import { windowBytes } from '../../src/consumer/partitioned/windows/fixed-windows.js'
import { WindowRun } from '../../src/consumer/partitioned/windows/window-run.js'

/** A message whose state is a map; `writes` lists what it was given, as `set`, `own` or `delete`. */
function message(state: Map<Key, unknown>): { m: ProcessorMessageImpl<unknown>; writes: string[] } {
  const writes: string[] = []
  const st = {
    get: (k: Key) => state.get(k),
    set: (k: Key, v: unknown) => writes.push(`set ${String(k)}=${JSON.stringify(v)}`),
    setOwned: (k: Key, v: unknown) => writes.push(`own ${String(k)}=${JSON.stringify(v)}`),
    delete: (k: Key) => writes.push(`delete ${String(k)}`),
  }
  return { m: { state: st } as unknown as ProcessorMessageImpl<unknown>, writes }
}

const LIMIT = 1024 * 1024

describe('WindowRun', () => {
  it("reads a message's own writes, then the run's, then its state; the run's last message writes each key's last value", () => {
    const base = new Map<Key, unknown>([
      ['a', 1],
      ['b', 2],
    ])
    const run = new WindowRun()
    const first = message(base)
    run.begin(first.m)
    expect(run.get('a')).toBe(1)
    run.setOwned('a', { n: 10 })
    run.delete('b')
    expect(run.get('a')).toEqual({ n: 10 })
    expect(run.get('b')).toBeUndefined()
    expect(run.take(LIMIT)).toBe(true)
    const second = message(base)
    run.begin(second.m)
    expect(run.get('a')).toEqual({ n: 10 })
    expect(run.get('b')).toBeUndefined()
    run.setOwned('a', { n: 11 })
    run.set('c', 3)
    expect(run.take(LIMIT)).toBe(true)
    expect(run.empty).toBe(false)
    run.writeAs(second.m)
    expect(second.writes).toEqual(['own a={"n":11}', 'delete b', 'own c=3'])
    expect(first.writes).toEqual([])
    expect(run.empty).toBe(true)
  })

  it('does not take a value whose encoding cannot wait: the message writes its layer itself, as it made it', () => {
    const run = new WindowRun()
    const { m, writes } = message(new Map())
    run.begin(m)
    run.set('plain', { x: 1 }) // not owned: the application may change it
    expect(run.take(LIMIT)).toBe(false)
    run.ownWrites(m)
    run.begin(m)
    run.setOwned('list', { a: [1, 2] }) // owned, but holds an array
    expect(run.take(LIMIT)).toBe(false)
    run.ownWrites(m)
    run.begin(m)
    run.setOwned('flat', { x: 1 }) // owned and flat: it waits
    expect(run.take(LIMIT)).toBe(true)
    expect(run.empty).toBe(false)
    expect(writes).toEqual(['set plain={"x":1}', 'own list={"a":[1,2]}'])
  })

  it(`takes at most ${MAX_STATE_WRITES} keys; a key it holds already does not count again`, () => {
    const run = new WindowRun()
    const { m } = message(new Map())
    for (let i = 0; i < MAX_STATE_WRITES; i++) {
      run.begin(m)
      run.set(`k${i}`, i)
      expect(run.take(LIMIT)).toBe(true)
    }
    run.begin(m)
    run.set('k0', -1)
    expect(run.take(LIMIT)).toBe(true)
    run.begin(m)
    run.set('new', 1)
    expect(run.take(LIMIT)).toBe(false)
    expect(run.get('new')).toBe(1) // still the message's own layer
  })

  it('takes writes within MAX_STATE_BYTES by their bound, and none over the record limit', () => {
    const run = new WindowRun()
    const { m } = message(new Map())
    const value = 'x'.repeat(500) // bound: 3002 bytes, with its key and a record's overhead
    let taken = 0
    for (;;) {
      run.begin(m)
      run.set(`k${taken}`, value)
      if (!run.take(LIMIT)) break
      taken++
    }
    expect(taken).toBeGreaterThan(200)
    expect(taken * 3002).toBeLessThanOrEqual(MAX_STATE_BYTES)
    const small = new WindowRun()
    small.begin(m)
    small.set('k', value)
    expect(small.take(1000)).toBe(false)
  })

  it("takes a writer's bound as given; a window's bound is the one deferredBytes finds in its value", () => {
    const aggregates: unknown[] = [
      0,
      -1.5e-300,
      12345678,
      true,
      '',
      'x'.repeat(512),
      'x'.repeat(513),
      { n: 1 },
      [1],
      NaN,
      null,
    ]
    for (const a of aggregates)
      expect(windowBytes(a), JSON.stringify(a)).toBe(deferredBytes({ a, m: 1.7e12, n: 3 }, true))
    const { m, writes } = message(new Map())
    const run = new WindowRun()
    run.begin(m)
    run.setOwned('k', { a: 1 }, 1000) // over the record limit by the bound given, not the value's own
    expect(run.take(1000)).toBe(false)
    run.setOwned('j', { a: 1 }, -1) // cannot wait, as its writer says
    expect(run.take(LIMIT)).toBe(false)
    run.ownWrites(m)
    expect(writes).toEqual(['own k={"a":1}', 'own j={"a":1}'])
  })
})
