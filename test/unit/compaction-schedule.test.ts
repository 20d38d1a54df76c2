// The gateway's compaction passes over the compacted streams it writes (CompactionSchedule): one
// pass per stream touched in a period, a failed pass told and tried again, none for a stream that
// is gone or no longer compacted, and close() waiting for the pass under way.
import { describe, expect, it } from 'vitest'
import type { TopicStore } from '../../src/backends/backend.js'
import { ClosedError, InvalidArgumentError, TopicNotFoundError } from '../../src/core/errors.js'
import { CompactionSchedule } from '../../src/gateway/stream/compaction-schedule.js'
import { until } from '../helpers/wait.js'

/** A store whose compact() records its calls and answers with `answer(topic, call)`. */
function store(answer: (topic: string, call: number) => Promise<void>) {
  const calls: string[] = []
  const fake = {
    compact: (topic: string) => {
      calls.push(topic)
      return answer(topic, calls.length).then(() => ({
        at: 0,
        before: { records: 0, bytes: 0 },
        after: { records: 0, bytes: 0 },
      }))
    },
  }
  return { calls, store: fake as unknown as TopicStore }
}

describe('CompactionSchedule', () => {
  it('passes once over each stream touched in a period, however often it was touched', async () => {
    const s = store(async () => undefined)
    const schedule = new CompactionSchedule(s.store, 5, () => undefined)
    for (let i = 0; i < 10; i++) schedule.touched('a')
    schedule.touched('b')
    await until(() => s.calls.length === 2)
    expect(s.calls.sort()).toEqual(['a', 'b'])
    schedule.touched('a')
    await until(() => s.calls.length === 3)
    expect(s.calls[2]).toBe('a')
    await schedule.close()
  })

  it('a failed pass is told and tried again; a stream gone or not compacted is not', async () => {
    const failures: string[] = []
    const s = store(async (topic, call) => {
      if (topic === 'gone') throw new TopicNotFoundError('gone')
      if (topic === 'plain') throw new InvalidArgumentError('not compacted')
      if (topic === 'closed') throw new ClosedError('closed')
      if (call <= 4) throw new Error('disk full')
    })
    const schedule = new CompactionSchedule(s.store, 5, (topic, e) =>
      failures.push(`${topic}: ${(e as Error).message}`),
    )
    for (const t of ['gone', 'plain', 'closed', 'flaky']) schedule.touched(t)
    await until(() => s.calls.filter((t) => t === 'flaky').length === 2)
    expect(failures).toEqual(['flaky: disk full'])
    await schedule.close()
    expect(s.calls.filter((t) => t !== 'flaky').sort()).toEqual(['closed', 'gone', 'plain'])
  })

  it('close() waits for the pass under way and starts none after it', async () => {
    let finish: () => void = () => undefined
    const s = store(() => new Promise<void>((resolve) => (finish = resolve)))
    const schedule = new CompactionSchedule(s.store, 5, () => undefined)
    schedule.touched('a')
    schedule.touched('b')
    await until(() => s.calls.length === 1)
    let closed = false
    const closing = schedule.close().then(() => (closed = true))
    schedule.touched('c')
    await Promise.resolve()
    expect(closed).toBe(false)
    finish()
    await closing
    expect(s.calls).toEqual(['a'])
  })
})
