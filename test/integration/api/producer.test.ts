import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { AbortError, ClosedError, InvalidArgumentError, open, type Twain } from '../../../src/index.js'
import { collect, frameCounts, makeTmp, rmTmp } from '../../unit/helpers.js'
import { sleep } from '../../helpers/wait.js'

describe('producer', () => {
  let dir: string
  let twain: Twain
  beforeEach(async () => {
    dir = makeTmp()
    twain = await open(dir)
    await twain.createTopic('p', { partitions: 2 })
  })
  afterEach(async () => {
    await twain.close()
    rmTmp(dir)
  })

  it('sendBatch of something other than an array of items is an InvalidArgumentError naming it', async () => {
    const p = twain.producer('p')
    for (const [items, text] of [
      [{}, /got object/],
      ['abc', /got string/],
      [null, /got null/],
      [[null], /got null/],
      [[1], /got 1/],
    ] as const) {
      await expect(p.sendBatch(items as never)).rejects.toThrow(InvalidArgumentError)
      await expect(p.sendBatch(items as never)).rejects.toThrow(text)
    }
  })

  it('writes the sends of one tick as one batch per partition', async () => {
    const p = twain.producer('p')
    await Promise.all(Array.from({ length: 100 }, (_, i) => p.send(i, `v${i}`, { partition: i % 2 })))
    expect(frameCounts(dir, 'p', 0)).toEqual([50])
    expect(frameCounts(dir, 'p', 1)).toEqual([50])
  })

  it('with lingerMs, sends within the linger window share one batch', async () => {
    const p = twain.producer('p', { lingerMs: 60 })
    const a = p.send(1, 'a', { partition: 0 })
    await sleep(10) // time is the subject: the second send comes 10 ms later, within the 60 ms linger
    const b = p.send(2, 'b', { partition: 0 })
    expect(await Promise.all([a, b])).toEqual([
      { partition: 0, offset: 0 },
      { partition: 0, offset: 1 },
    ])
    expect(frameCounts(dir, 'p', 0)).toEqual([2])
  })

  it('sendBatch of an empty array resolves [] and writes nothing', async () => {
    expect(await twain.producer('p').sendBatch([])).toEqual([])
    expect(await twain.length('p')).toBe(0)
  })

  it('rejects an explicit partition out of range and a partitioner result out of range with InvalidArgumentError', async () => {
    await expect(twain.producer('p').send(1, 'x', { partition: 2 })).rejects.toBeInstanceOf(InvalidArgumentError)
    await expect(twain.producer('p').send(1, 'x', { partition: 2 })).rejects.toThrow(/2/)
    await expect(twain.producer('p', { partitioner: () => 7 }).send(1, 'x')).rejects.toThrow(/7/)
    await expect(twain.producer('p', { partitioner: () => 0.5 }).send(1, 'x')).rejects.toBeInstanceOf(
      InvalidArgumentError,
    )
    expect(await twain.length('p')).toBe(0)
  })

  it('rejects bad producer options with InvalidArgumentError', () => {
    expect(() => twain.producer('p', { lingerMs: -1 })).toThrow(InvalidArgumentError)
    expect(() => twain.producer('p', { maxBatch: 0 })).toThrow(InvalidArgumentError)
  })

  it('maxBatch splits a large send into several frames with still-dense offsets', async () => {
    const p = twain.producer('p', { maxBatch: 7 })
    const rs = await p.sendBatch(Array.from({ length: 20 }, (_, i) => ({ key: i, value: i, partition: 0 })))
    expect(rs.map((r) => r.offset)).toEqual(Array.from({ length: 20 }, (_, i) => i))
    expect(frameCounts(dir, 'p', 0)).toEqual([7, 7, 6])
  })

  it('a closed producer rejects sends with ClosedError; close flushes what was sent before', async () => {
    const p = twain.producer('p')
    const before = p.send(1, 'before close', { partition: 0 })
    await p.close()
    expect(await before).toEqual({ partition: 0, offset: 0 })
    await expect(p.send(1, 'after close')).rejects.toBeInstanceOf(ClosedError)
    await expect(p.close()).resolves.toBeUndefined() // idempotent
    expect(await twain.length('p')).toBe(1)
  })

  it('twain.close() flushes pending sends; the data is there when the directory is reopened', async () => {
    const p = twain.producer('p')
    const sends = [p.send(1, 'a', { partition: 0 }), p.send(2, 'b', { partition: 1 })]
    await twain.close()
    expect(await Promise.all(sends)).toEqual([
      { partition: 0, offset: 0 },
      { partition: 1, offset: 0 },
    ])
    const again = await open(dir)
    try {
      expect((await collect(again.history('p'))).map((m) => m.value)).toEqual(['a', 'b'])
    } finally {
      await again.close()
    }
  })

  it('after twain.close(), creating a producer or topic throws ClosedError and ping() is false', async () => {
    await twain.close()
    expect(() => twain.producer('p')).toThrow(ClosedError)
    await expect(twain.createTopic('x')).rejects.toBeInstanceOf(ClosedError)
    expect(await twain.ping()).toBe(false)
  })

  it('an aborted producer signal rejects sends not yet written with AbortError and refuses new ones', async () => {
    const ctrl = new AbortController()
    const p = twain.producer('p', { signal: ctrl.signal, lingerMs: 1000 })
    const queued = p.send(1, 'queued', { partition: 0 })
    ctrl.abort()
    await expect(queued).rejects.toBeInstanceOf(AbortError)
    await expect(p.send(1, 'later')).rejects.toBeInstanceOf(ClosedError)
    expect(await twain.length('p')).toBe(0)
  })

  it('identifies the writer: producerId is the instance clientId, and a custom clientId is kept', async () => {
    const other = await open(dir, { clientId: 'custom-client' })
    try {
      expect(other.clientId).toBe('custom-client')
      expect(other.backend).toBe('file')
      await other.producer('p').send(1, 'x', { partition: 0 })
      await twain.producer('p').send(1, 'y', { partition: 0 })
      expect((await collect(twain.history('p'))).map((m) => m.producerId)).toEqual(['custom-client', twain.clientId])
      expect(twain.clientId).not.toBe('custom-client')
    } finally {
      await other.close()
    }
  })
})

describe('producer flush order', () => {
  it('a flush waiting on an async validator is not overtaken by a later flush', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'twainmq-order-'))
    const twain = await open(dir)
    try {
      twain.registerType('Slow', {
        '~standard': { version: 1, vendor: 'test', validate: async (v: unknown) => (await sleep(30), { value: v }) },
      })
      await twain.createTopic('o')
      const p = twain.producer('o')
      const first = p.send(1, { n: 1 }, { type: 'Slow' })
      await new Promise((r) => setImmediate(r)) // the first flush has started and waits on the validator
      const second = p.send(1, 'plain')
      const [a, b] = await Promise.all([first, second])
      expect(a.offset).toBe(0)
      expect(b.offset).toBe(1)
    } finally {
      await twain.close()
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
