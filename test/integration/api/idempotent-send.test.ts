// send(key, value, { id }) and sendBatch items with an id, through the public API on a directory:
// duplicates within the producer's dedupWindowMs resolve with the stored offset and `duplicate:
// true`; the id is the x-twain-id header readers see; bad ids and windows are refused by name.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { InvalidArgumentError, open, type Twain } from '../../../src/index.js'
import { collect, makeTmp, rmTmp } from '../../unit/helpers.js'
import { until } from '../../helpers/wait.js'

describe('idempotent sends', () => {
  let dir: string
  let twain: Twain
  beforeEach(async () => {
    dir = makeTmp()
    twain = await open(dir)
    await twain.createTopic('o', { partitions: 2, keyType: 'string' })
  })
  afterEach(async () => {
    await twain.close()
    rmTmp(dir)
  })

  it('a repeated id resolves with the stored offset and duplicate: true, within one flush and across producers', async () => {
    const p = twain.producer<string>('o')
    const first = await p.send('k', 'one', { id: 'order-1' })
    expect(first.duplicate).toBeUndefined()
    expect(await p.send('k', 'one again', { id: 'order-1' })).toEqual({ ...first, duplicate: true })
    // In one flush: the second of two sends with an id is the duplicate of the first.
    const [a, b, plain] = await Promise.all([
      p.send('k', 'two', { id: 'order-2' }),
      p.send('k', 'two again', { id: 'order-2' }),
      p.send('k', 'no id'),
    ])
    expect(b).toEqual({ ...a, duplicate: true })
    expect(plain.offset).toBe(a.offset + 1)
    // Another producer (and sendBatch) sees the same ids.
    const q = twain.producer<string>('o')
    const batch = await q.sendBatch([
      { key: 'k', value: 'x', id: 'order-1' },
      { key: 'k', value: 'three', id: 'order-3' },
    ])
    expect(batch[0]).toEqual({ ...first, duplicate: true })
    expect(batch[1]).toEqual({ partition: first.partition, offset: plain.offset + 1 })
    const stored = await collect(twain.history<string>('o', { partition: first.partition }))
    expect(stored.map((m) => [m.value, m.headers['x-twain-id']])).toEqual([
      ['one', 'order-1'],
      ['two', 'order-2'],
      ['no id', undefined],
      ['three', 'order-3'],
    ])
  })

  it("an id is stored again once the producer's window has passed", async () => {
    const short = twain.producer<string>('o', { dedupWindowMs: 1 })
    const first = await short.send('k', 'a', { id: 'x' })
    const t = Date.now()
    await until(() => Date.now() - t > 5, 1000, 'a few ms to pass')
    const again = await short.send('k', 'b', { id: 'x' })
    expect(again).toEqual({ partition: first.partition, offset: first.offset + 1 })
    // A producer with a longer window sees the latest.
    expect(await twain.producer<string>('o').send('k', 'c', { id: 'x' })).toEqual({ ...again, duplicate: true })
  })

  it('refuses bad ids and windows, naming the value', async () => {
    const p = twain.producer<string>('o')
    for (const [id, text] of [
      ['', /non-empty string, got ""/],
      [42, /non-empty string, got 42/],
      ['é'.repeat(300), /at most 512 UTF-8 bytes, got 600/],
    ] as const) {
      const e = await p.send('k', 'v', { id: id as string }).catch((err: unknown) => err)
      expect(e).toBeInstanceOf(InvalidArgumentError)
      expect((e as Error).message).toMatch(text)
    }
    const clash = await p
      .send('k', 'v', { id: 'a', headers: { 'x-twain-id': 'b' } })
      .catch((err: unknown) => err as Error)
    expect(clash).toBeInstanceOf(InvalidArgumentError)
    expect((clash as Error).message).toContain('"a"')
    for (const bad of [0, -5, 1.5, 86_400_001, Number.NaN])
      expect(() => twain.producer('o', { dedupWindowMs: bad }), String(bad)).toThrow(/dedupWindowMs/)
    // The header alone is an id too.
    const viaHeader = await p.send('k', 'h', { headers: { 'x-twain-id': 'h1' } })
    expect(await p.send('k', 'h2', { id: 'h1' })).toEqual({ ...viaHeader, duplicate: true })
  })

  it('a TwainMQ-format topic refuses ids', async () => {
    const v1 = makeTmp()
    const old = await open(v1, { format: 'twainmq-v1' })
    try {
      await old.createTopic('t')
      const e = await old
        .producer('t')
        .send(1, 'v', { id: 'a' })
        .catch((err: unknown) => err as Error)
      expect(e).toBeInstanceOf(InvalidArgumentError)
    } finally {
      await old.close()
      rmTmp(v1)
    }
  })
})
