// The fetch loop's refill rule (decisions 166, 222), with a member and reads of its own: a member
// whose application is busy with what it holds reads again once half of maxInFlight is free, not
// whenever a settlement frees a slot, however its last round went; while the application waits,
// any room is read.
import { describe, expect, it } from 'vitest'
import { fetchLoop, type FetchingMember, type FetchRounds } from '../../src/consumer/fetch-loop.js'
import { Wake } from '../../src/stream/wake.js'
import { until } from '../helpers/wait.js'

const MAX = 1000

/** A member with no stall warning, and reads that fill it up, `settleDuring` messages being settled while each read is under way. */
function rig(settleDuring: number) {
  const member = {
    state: 'running' as 'running' | 'closing' | 'closed',
    memberId: 'm',
    opts: { group: 'g', maxInFlight: MAX, stallWarningMs: Infinity },
    views: { waitingSince: undefined as number | undefined },
    demand: true,
    fetchWake: new Wake(),
    emitError: (e: unknown) => {
      throw e
    },
  } satisfies FetchingMember
  /** The room each round had. */
  const rooms: number[] = []
  const reads: FetchRounds & { outstanding: number } = {
    outstanding: 0,
    async round(): Promise<boolean> {
      rooms.push(MAX - reads.outstanding)
      reads.outstanding = MAX
      await new Promise((resolve) => setImmediate(resolve)) // the read's reply
      reads.outstanding -= settleDuring // the application settled some meanwhile
      return true
    },
  }
  const loop = fetchLoop(member, reads)
  const stop = async () => {
    member.state = 'closing'
    member.fetchWake.wake()
    await loop
  }
  return { member, reads, rooms, stop }
}

/** Let the loop run: some turns of the event loop. */
const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve))
}

describe('fetch loop', () => {
  it('a member busy with what it holds reads again at the refill mark, not for each few settlements', async () => {
    const { member, reads, rooms, stop } = rig(3)
    await until(() => rooms.length === 1, 5000, 'the first round')
    await turns(50)
    // Three settled while the first read was under way: not a reason to read three more.
    expect(rooms).toEqual([MAX])
    // Settlements reach the mark: one round for the half now free.
    reads.outstanding = MAX / 2
    member.fetchWake.wake()
    await until(() => rooms.length === 2, 5000, 'the refill')
    await turns(50)
    expect(rooms).toEqual([MAX, MAX / 2])
    await stop()
  })

  it('while the application waits for messages, the member reads whatever room it has', async () => {
    const { member, rooms, stop } = rig(3)
    await until(() => rooms.length === 1, 5000, 'the first round')
    await turns(50)
    expect(rooms).toEqual([MAX])
    member.views.waitingSince = Date.now()
    member.fetchWake.wake() // as MemberViews does when the application starts waiting
    await until(() => rooms.length >= 2, 5000, 'a read of the room while it waits')
    expect(rooms[1]).toBe(3)
    await stop()
  })
})
