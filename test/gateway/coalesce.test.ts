import { describe, expect, it } from 'vitest'
import { coalescing } from '../../src/gateway/stream/coalesce.js'

/** A run whose end the test controls; it resolves with the counter value when it started. */
function controlled() {
  let counter = 0
  const ends: Array<() => void> = []
  const run = () => {
    const seen = ++counter
    return new Promise<number>((resolve) => ends.push(() => resolve(seen)))
  }
  return { run, ends, started: () => counter }
}

describe('coalescing', () => {
  it('a burst of callers costs two runs, and no caller gets a run that started before its call', async () => {
    const share = coalescing<number>()
    const c = controlled()
    const first = share('k', c.run)
    const burst = Array.from({ length: 100 }, () => share('k', c.run))
    expect(c.started()).toBe(1) // the burst waits behind the running one
    c.ends[0]!()
    expect(await first).toBe(1)
    await new Promise((r) => setImmediate(r))
    expect(c.started()).toBe(2)
    const late = share('k', c.run) // arrives while the burst's run is in flight: queued behind it
    c.ends[1]!()
    expect(await Promise.all(burst)).toEqual(Array.from({ length: 100 }, () => 2))
    await new Promise((r) => setImmediate(r))
    c.ends[2]!()
    expect(await late).toBe(3)
    expect(c.started()).toBe(3)
  })

  it('keys are independent and a failed run is not shared with the callers queued behind it', async () => {
    const share = coalescing<string>()
    let n = 0
    const failing = share('a', () => Promise.reject(new Error('boom')))
    const queued = share('a', async () => `ok ${++n}`)
    const other = share('b', async () => 'b')
    await expect(failing).rejects.toThrow('boom')
    expect(await queued).toBe('ok 1')
    expect(await other).toBe('b')
    expect(await share('a', async () => `ok ${++n}`)).toBe('ok 2')
  })
})
