// A processor's session deadline (the time after which the store refuses its outputs) is never
// later than the time the store deems its session over and lets another member take its leases.
// The file backend records a heartbeat only when the last recorded one is more than a sixth of the
// session timeout old; a member that counted its deadline from its latest heartbeat instead of the
// recorded one was up to that much late, and a zombie resumed right after a successor took its
// partitions had its outputs stored (test/faults/processor-zombie.test.ts caught it now and then).
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { ledgerOf } from '../../../src/consumer/partitioned/ledger-of.js'
import { open, type Twain } from '../../../src/index.js'
import { tempDir } from '../../helpers/tmp.js'
import { sleep, until } from '../../helpers/wait.js'

const SESSION_MS = 6000

let twain: Twain | undefined
let tmp: ReturnType<typeof tempDir> | undefined
afterEach(async () => {
  await twain?.close()
  twain = undefined
  tmp?.remove()
  tmp = undefined
})

describe('file: a processor session deadline', () => {
  it('is never later than the recorded heartbeat plus the session timeout', async () => {
    tmp = tempDir('twainmq-deadline-')
    twain = await open(tmp.dir, { pollMs: 50 })
    await twain.createTopic('in', { partitions: 1 })
    const processor = twain.processor('in', { group: 'g', sessionTimeoutMs: SESSION_MS, heartbeatIntervalMs: 50 })
    const ledger = ledgerOf(processor)
    const state = join(tmp.dir, '__groups', 'g', 'state.json')
    /** The member's last heartbeat as the store recorded it. */
    const recorded = (): number =>
      (JSON.parse(readFileSync(state, 'utf8')) as { members: Record<string, { lastSeen: number }> }).members[
        processor.memberId
      ]?.lastSeen ?? Number.NaN
    await until(() => Number.isFinite(ledger.sessionDeadline) && Number.isFinite(recorded()), 10_000, 'a heartbeat')
    // Sampled across three recorded heartbeats (each > SESSION_MS / 6 after the one before, with
    // ~20 unrecorded ones between): the deadline first, then the record (which only moves on).
    const seen = new Set<number>()
    const late: string[] = []
    while (seen.size < 3) {
      const deadline = ledger.sessionDeadline
      const at = recorded()
      seen.add(at)
      if (deadline > at + SESSION_MS) late.push(`deadline ${deadline} > recorded ${at} + ${SESSION_MS}`)
      await sleep(10)
    }
    expect(late.slice(0, 5), `${late.length} samples late`).toEqual([])
    await processor.close()
  }, 30_000)
})
