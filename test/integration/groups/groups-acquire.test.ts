// A member's step that takes new partitions, when opening one of their readers fails (a store
// error, as a dropped Redis connection or a file descriptor limit gives): the error is emitted,
// the partitions opened in that step are consumed, the failed one is taken at a later step (from
// where a seek() asked before put it), and every reader opened is closed when the consumer closes.
// On a directory and on Redis.
import { describe, expect, it } from 'vitest'
import type { PartitionReader } from '../../../src/backends/backend.js'
import { BackendError } from '../../../src/index.js'
import { backendOf } from '../../../src/facade/twain.js'
import { backends } from '../../conformance/backends.js'
import { FAST, twain, useGroupStore } from './groups-fixtures.js'

const kinds = backends().filter((k) => k.name === 'file' || k.name === 'redis')

/** Fail the first reader opened on partition `failing` of `topic`; count the readers opened and closed. */
function readersOf(topic: string, failing: number): { opened: number; closed: number; failed: number } {
  const store = backendOf(twain)
  const counts = { opened: 0, closed: 0, failed: 0 }
  const openReader = store.openReader.bind(store)
  store.openReader = async (t, partition, from): Promise<PartitionReader> => {
    if (t === topic && partition === failing && counts.failed === 0) {
      counts.failed++
      throw new BackendError(`injected: opening ${t}/${partition} failed`)
    }
    const r = await openReader(t, partition, from)
    counts.opened++
    const close = r.close.bind(r)
    r.close = () => {
      counts.closed++
      return close()
    }
    return r
  }
  return counts
}

describe.each(kinds)('taking partitions on $name', (kind) => {
  useGroupStore(kind)

  it('a reader that fails to open: the error is emitted, every partition is consumed, every reader closed', async () => {
    await twain.createTopic('t', { partitions: 4 })
    await twain
      .producer<string>('t')
      .sendBatch(Array.from({ length: 8 }, (_, i) => ({ key: i, value: `m${i}`, partition: i % 4 })))
    const counts = readersOf('t', 2)
    const c = twain.consumer<string>('t', { group: 'g', from: 'start', ...FAST })
    const errors: Error[] = []
    c.on('error', (e: Error) => errors.push(e))
    const seen = new Set<string>()
    for await (const m of c) {
      seen.add(m.value)
      m.ack()
      if (seen.size === 8) break
    }
    await c.close()
    expect(errors.map((e) => e.message)).toContain('injected: opening t/2 failed')
    expect(counts.failed).toBe(1)
    expect(counts.closed).toBe(counts.opened)
  })

  it('a seek() asked before the partition was taken holds when its first open failed', async () => {
    await twain.createTopic('t', { partitions: 4 })
    await twain
      .producer<string>('t')
      .sendBatch(Array.from({ length: 12 }, (_, i) => ({ key: i, value: `m${i}`, partition: i % 4 })))
    readersOf('t', 2)
    const c = twain.consumer<string>('t', { group: 'g', from: 'start', ...FAST })
    c.on('error', () => undefined) // the injected failure
    c.seek('t', 2, 2) // partition 2 holds m2, m6, m10: from its third
    const seen: string[] = []
    for await (const m of c) {
      seen.push(`${m.partition}@${m.offset}`)
      m.ack()
      if (seen.length === 10) break
    }
    await c.close()
    expect(seen.filter((s) => s.startsWith('2@'))).toEqual(['2@2'])
  })
})
