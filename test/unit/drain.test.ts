// The member's drain wait (consumer/drain.ts): event-driven, one deadline.
import { describe, expect, it } from 'vitest'
import { drain } from '../../src/consumer/drain.js'
import { Wake } from '../../src/stream/wake.js'

describe('drain', () => {
  it('resolves at once when nothing is in flight', async () => {
    await drain(new Wake(), () => true, 60_000)
  })

  it('resolves on the wake that finds it drained, long before the deadline', async () => {
    const wake = new Wake()
    let inFlight = 2
    let checks = 0
    const done = drain(wake, () => (checks++, inFlight === 0), 60_000)
    inFlight = 1
    wake.wake() // re-checked: still one in flight
    await Promise.resolve()
    inFlight = 0
    wake.wake()
    await done
    expect(inFlight).toBe(0)
    expect(checks).toBeLessThanOrEqual(4) // the first check, then one per wake at most: no polling
  })

  it('gives up at the deadline when something stays in flight', async () => {
    const started = Date.now()
    await drain(new Wake(), () => false, 50)
    expect(Date.now() - started).toBeGreaterThanOrEqual(45)
  })
})
