// `windowed()` holds each key's last state write of a run of messages and lets the run's last
// message write them (decision 227); the messages before it are acked with that write. If they were
// acked at once instead, a changelog write that fails would send the partition back only to the
// run's last message: the state would lose what the others added, and a window's count come out
// short. Here the first changelog write of the store fails (an error that is not retriable), on a
// directory and on Redis; the window's result, once a later click closes it, counts every click.
import { describe, expect, it } from 'vitest'
import type { SourcePosition } from '../../src/backends/backend.js'
import { changelogTopic } from '../../src/consumer/partitioned/state/processor-state.js'
import { TwainError } from '../../src/core/errors.js'
import { backendOf } from '../../src/facade/twain.js'
import { tumbling, windowed, type WindowResult } from '../../src/index.js'
import { backends } from '../conformance/backends.js'
import { until } from '../helpers/wait.js'
import { twain, useGroupStore } from '../integration/groups/groups-fixtures.js'

const kinds = backends().filter((k) => k.name === 'file' || k.name === 'redis')
const T0 = Date.UTC(2026, 0, 1)
/** Clicks of one user in the window [0 s, 10 s). */
const CLICKS = 10

describe.each(kinds)('a failed state write of a windowed run on $name', (kind) => {
  useGroupStore(kind)

  it("sends the whole run again: the window's count has every click", async () => {
    await twain.createTopic('in', { partitions: 1, keyType: 'string' })
    await twain.createTopic('out', { partitions: 1, keyType: 'string' })
    const clicks = twain.producer<string, string>('in')
    await clicks.sendBatch(
      Array.from({ length: CLICKS }, (_, i) => ({ key: 'u', value: `c${i}`, timestamp: T0 + i * 500 })),
    )

    // The changelog's first write fails; the ones after it go through (and are counted).
    const store = backendOf(twain)
    const append = store.appendSourced.bind(store)
    const changelog = changelogTopic('w', 'win')
    let failed = 0
    let written = 0
    let lastWritten = -1
    store.appendSourced = async (...args: Parameters<typeof append>) => {
      if (args[0] === changelog && failed === 0) {
        failed++
        throw new TwainError('Injected: the first changelog write is refused', { code: 'ERR_TEST' })
      }
      const r = await append(...args)
      if (args[0] === changelog) {
        written++
        lastWritten = Math.max(lastWritten, ...args[5].map((p: SourcePosition) => p.offset))
      }
      return r
    }

    const proc = twain.processor<string, string>('in', { group: 'w', state: 'win', from: 'start' })
    const errors: unknown[] = []
    proc.on('error', (e) => errors.push(e))
    const it = windowed(proc, {
      window: tumbling(10_000),
      to: 'out',
      initial: () => 0,
      add: (n: number) => n + 1,
    })[Symbol.asyncIterator]()
    const first = it.next()
    try {
      // The failed write sent the partition back; the clicks came again and their writes are stored.
      await until(() => failed === 1 && written > 0 && lastWritten === CLICKS - 1)
      await clicks.send('u', 'closer', { timestamp: T0 + 30_000 })
      const r = (await first).value as WindowResult<number, string>
      expect({ key: r.key, start: r.start - T0, end: r.end - T0, value: r.value }).toEqual({
        key: 'u',
        start: 0,
        end: 10_000,
        value: CLICKS,
      })
      expect(errors.map((e) => (e as TwainError).code)).toEqual(['ERR_TEST'])
    } finally {
      await it.return?.()
      await proc.close()
      await clicks.close()
    }
    const stored: number[] = []
    for await (const m of twain.history<{ value: number }, string>('out')) stored.push(m.value.value)
    expect(stored).toEqual([CLICKS])
  })
})
