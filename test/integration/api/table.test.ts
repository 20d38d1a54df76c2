// twain.table() through the public API on every store kind: the latest value per key once ready(),
// tombstones removing keys, following the topic live, changes() with previous values, a slow
// reader of changes slowing the table instead of losing changes, and closing.
import { describe, expect, it } from 'vitest'
import { ClosedError, InvalidArgumentError, TopicNotFoundError, type TableChange } from '../../../src/index.js'
import { backends } from '../../conformance/backends.js'
import { until } from '../../helpers/wait.js'
import { openOther, twain, useGroupStore } from '../groups/groups-fixtures.js'

describe.each(backends())('table on $name', (kind) => {
  useGroupStore(kind)

  it('ready() holds the latest value of every key sent before table() was called', async () => {
    await twain.createTopic('devices', { partitions: 3, keyType: 'string' })
    const p = twain.producer<{ v: number } | null, string>('devices')
    const sends = []
    for (let i = 0; i < 300; i++) sends.push(p.send(`k${i % 40}`, { v: i }))
    await Promise.all(sends)
    await p.send('k3', null)
    await p.send('k7', null)
    const table = twain.table<{ v: number }, string>('devices')
    await table.ready()
    expect(table.size).toBe(38)
    expect(table.get('k0')).toEqual({ v: 280 })
    expect(table.get('k19')).toEqual({ v: 299 })
    expect(table.get('k39')).toEqual({ v: 279 })
    expect(table.has('k3')).toBe(false)
    expect(table.get('k7')).toBeUndefined()
    const all = new Map(table.entries())
    for (let k = 0; k < 40; k++) {
      if (k === 3 || k === 7) continue
      expect(all.get(`k${k}`)).toEqual({ v: k < 20 ? 280 + k : 240 + k })
    }
    await table.close()
  })

  it('ready() resolves on an empty topic and rejects on a missing one', async () => {
    await twain.createTopic('empty', { partitions: 2 })
    const empty = twain.table('empty')
    await empty.ready()
    expect(empty.size).toBe(0)
    await expect(twain.table('missing').ready()).rejects.toBeInstanceOf(TopicNotFoundError)
  })

  it('follows the topic live, also records another instance sends', async () => {
    await twain.createTopic('live', { partitions: 2, keyType: 'string' })
    const table = twain.table<string, string>('live')
    await table.ready()
    const other = await openOther()
    await other.producer<string | null, string>('live').send('a', 'one')
    await until(() => table.get('a') === 'one', 10_000, 'the live record in the table')
    await other.producer<string | null, string>('live').send('a', null)
    await until(() => !table.has('a'), 10_000, 'the tombstone applied')
  })

  it('changes() gives every change after it began, with the previous value; it ends on close', async () => {
    await twain.createTopic('prices', { partitions: 1, keyType: 'string' })
    const p = twain.producer<number | null, string>('prices')
    await p.send('x', 1)
    const table = twain.table<number, string>('prices')
    await table.ready()
    const seen: TableChange<number, string>[] = []
    const reading = (async () => {
      for await (const c of table.changes()) seen.push(c)
    })()
    // The iteration registers when it begins: send probes until one reaches it, then wait for the
    // last one sent (an earlier probe may still be on its way), so no probe comes after the clear.
    let probes = 0
    await until(
      async () => (await p.send('probe', ++probes), seen.length > 0),
      10_000,
      'the changes iteration to begin',
    )
    await until(() => seen.some((c) => c.key === 'probe' && c.value === probes), 10_000, 'the last probe')
    seen.length = 0
    await p.send('x', 2)
    await p.send('x', null)
    await until(() => seen.length === 2, 10_000, 'two changes')
    expect(seen.map((c) => [c.key, c.value, c.previous])).toEqual([
      ['x', 2, 1],
      ['x', null, 2],
    ])
    expect(seen[1]?.message.value).toBeNull()
    await table.close()
    await reading
  })

  it('a slow reader of changes slows the table and misses none', async () => {
    await twain.createTopic('counts', { partitions: 1, keyType: 'u32' })
    const table = twain.table<number, number>('counts', { changesBuffer: 8 })
    await table.ready()
    const it = table.changes()[Symbol.asyncIterator]()
    const first = it.next()
    const p = twain.producer<number, number>('counts')
    await Promise.all(Array.from({ length: 2000 }, (_, i) => p.send(i % 10, i)))
    await first
    const values: number[] = []
    for (let i = 1; i < 2000; i++) {
      const r = await it.next()
      values.push((r.value as TableChange<number, number>).value as number)
    }
    expect(values).toEqual(Array.from({ length: 1999 }, (_, i) => i + 1))
    await until(() => table.get(9) === 1999, 10_000, 'the table to apply the last record')
    await it.return?.()
  })

  it('a reader of changes that awaits ready() does not hold the table up before it is ready', async () => {
    await twain.createTopic('backlog', { partitions: 1, keyType: 'u32' })
    const table = twain.table<number, number>('backlog', { changesBuffer: 4 })
    const it = table.changes()[Symbol.asyncIterator]() // begun, not read: a full buffer must not stop ready()
    const p = twain.producer<number, number>('backlog')
    await p.sendBatch(Array.from({ length: 10_000 }, (_, i) => ({ key: i % 7, value: i })))
    const table2 = twain.table<number, number>('backlog', { changesBuffer: 4 })
    const it2 = table2.changes()[Symbol.asyncIterator]()
    await table2.ready() // 10,000 changes (more than one read) for a buffer of 4, nobody reading them yet
    expect(table2.size).toBe(7)
    expect((await it2.next()).value).toMatchObject({ key: 0, value: 0, previous: undefined })
    await it2.return?.()
    await it.return?.()
  })

  it('close() before ready() rejects it with ClosedError; twain.close() closes tables', async () => {
    await twain.createTopic('t', { partitions: 1 })
    const table = twain.table('t')
    await table.close()
    await expect(table.ready()).rejects.toBeInstanceOf(ClosedError)
    const other = await openOther()
    const t2 = other.table('t')
    await t2.ready()
    await other.close()
    await expect(t2.close()).resolves.toBeUndefined()
  })

  it('refuses bad options by name', () => {
    expect(() => twain.table('t', { changesBuffer: 0 })).toThrow(InvalidArgumentError)
    expect(() => twain.table('t', { changesBuffer: 0 })).toThrow(/changesBuffer is 0/)
    expect(() => twain.table('t', { buffer: 1 } as never)).toThrow(/buffer/)
  })
})

describe.each(backends())('table over a compacted topic on $name', (kind) => {
  useGroupStore(kind)

  it('after a pass the topic holds one record per key and ready() gives every latest value', async () => {
    const KEYS = 500
    const UPDATES = 20_000
    await twain.createTopic('state', { partitions: 4, keyType: 'string', compact: true })
    const p = twain.producer<{ n: number } | null, string>('state')
    for (let i = 0; i < UPDATES; i += 1000)
      await p.sendBatch(Array.from({ length: 1000 }, (_, j) => ({ key: `k${(i + j) % KEYS}`, value: { n: i + j } })))
    await p.send('k0', null) // a tombstone, younger than its retention: kept, and k0 is not in the table
    await twain.compactTopic('state')
    let stored = 0
    for await (const _ of twain.history('state')) stored++
    expect(stored).toBe(KEYS)
    const table = twain.table<{ n: number }, string>('state')
    await table.ready()
    expect(table.size).toBe(KEYS - 1)
    expect(table.has('k0')).toBe(false)
    for (let k = 1; k < KEYS; k++) expect(table.get(`k${k}`)).toEqual({ n: UPDATES - KEYS + k })
    await table.close()
  }, 120_000)
})
