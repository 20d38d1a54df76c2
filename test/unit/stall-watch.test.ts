// The stall watch (src/consumer/stall-watch.ts) on a fake member and fake timers: ERR_STALLED once
// the member has been full with no fetch round for stallWarningMs while the application waits;
// the stall counts from the later of "full" and "waiting"; once per stall; a round ends it.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { StalledError } from '../../src/index.js'
import { StallWatch, type WatchedMember } from '../../src/consumer/stall-watch.js'

function fakeMember(stallWarningMs = 1000, maxInFlight = 10) {
  const member = {
    state: 'running' as WatchedMember['state'],
    memberId: 'm-1',
    opts: { group: 'g', maxInFlight, stallWarningMs },
    views: { waitingSince: undefined as number | undefined },
    errors: [] as unknown[],
    held: 0,
    emitError(e: unknown) {
      member.errors.push(e)
    },
  }
  const watch = new StallWatch(member, () => member.held)
  /** A fetch round that leaves the member holding `held`. */
  const round = (held: number) => {
    watch.roundStarted()
    member.held = held
    watch.roundEnded()
  }
  return { member, watch, round }
}

describe('StallWatch', () => {
  beforeEach(() => void vi.useFakeTimers())
  afterEach(() => void vi.useRealTimers())

  it('reports a member full and waiting for stallWarningMs, once, naming held and maxInFlight', () => {
    const { member, watch, round } = fakeMember()
    round(10)
    member.views.waitingSince = Date.now()
    vi.advanceTimersByTime(999)
    expect(member.errors).toEqual([])
    vi.advanceTimersByTime(1)
    expect(member.errors).toHaveLength(1)
    const e = member.errors[0] as StalledError
    expect(e).toBeInstanceOf(StalledError)
    expect(e).toMatchObject({ code: 'ERR_STALLED', held: 10, maxInFlight: 10, stalledMs: 1000 })
    expect(e.message).toContain('Member "m-1" of group "g" holds 10 messages (maxInFlight 10)')
    vi.advanceTimersByTime(10_000)
    expect(member.errors).toHaveLength(1)
    watch.stop()
  })

  it('counts from when the application began to wait, when that is later than the fill', () => {
    const { member, watch, round } = fakeMember()
    round(10) // full, but the handler is busy: not waiting
    vi.advanceTimersByTime(1500)
    expect(member.errors).toEqual([])
    member.views.waitingSince = Date.now()
    vi.advanceTimersByTime(999)
    expect(member.errors).toEqual([])
    vi.advanceTimersByTime(1)
    expect(member.errors).toHaveLength(1)
    expect((member.errors[0] as StalledError).stalledMs).toBe(2500)
    watch.stop()
  })

  it('a settlement before stallWarningMs (the member no longer full) reports nothing; the next fill starts over', () => {
    const { member, watch, round } = fakeMember()
    member.views.waitingSince = Date.now()
    round(10)
    vi.advanceTimersByTime(600)
    member.held = 9 // an ack
    vi.advanceTimersByTime(600)
    round(10) // the refill
    vi.advanceTimersByTime(900)
    expect(member.errors).toEqual([])
    vi.advanceTimersByTime(200)
    expect(member.errors).toHaveLength(1)
    watch.stop()
  })

  it('after a report, a round (progress) and a new stall report again', () => {
    const { member, watch, round } = fakeMember()
    member.views.waitingSince = Date.now()
    round(10)
    vi.advanceTimersByTime(1000)
    expect(member.errors).toHaveLength(1)
    member.held = 4 // acks freed the refill mark
    round(10)
    vi.advanceTimersByTime(1000)
    expect(member.errors).toHaveLength(2)
    watch.stop()
  })

  it('a member below maxInFlight, one that is closing, and stallWarningMs Infinity report nothing', () => {
    const below = fakeMember()
    below.member.views.waitingSince = Date.now()
    below.round(9)
    const closing = fakeMember()
    closing.member.views.waitingSince = Date.now()
    closing.round(10)
    closing.member.state = 'closing'
    const off = fakeMember(Infinity)
    off.member.views.waitingSince = Date.now()
    off.round(10)
    vi.advanceTimersByTime(100_000)
    expect([below, closing, off].map((f) => f.member.errors)).toEqual([[], [], []])
    expect(vi.getTimerCount()).toBe(0)
  })

  it('stop() clears its timer', () => {
    const { watch, round } = fakeMember()
    round(10)
    expect(vi.getTimerCount()).toBe(1)
    watch.stop()
    expect(vi.getTimerCount()).toBe(0)
  })
})
