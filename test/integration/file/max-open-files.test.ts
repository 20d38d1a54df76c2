// The file backend under a small maxOpenFiles cap: the pool of file descriptors (unit-tested in
// test/unit/fd-pool.test.ts) evicting constantly on a real store.
import { readdirSync } from 'node:fs'
import { afterEach, describe, expect, it } from 'vitest'
import { InvalidArgumentError, open, type Message, type Twain } from '../../../src/index.js'
import { collect, makeTmp, rmTmp, takeN } from '../../unit/helpers.js'

/** Entries of /proc/self/fd (undefined where there is none). */
function fdCount(): number | undefined {
  try {
    return readdirSync('/proc/self/fd').length
  } catch {
    return undefined
  }
}

describe('file backend with maxOpenFiles', () => {
  let dir: string | undefined
  let twain: Twain | undefined
  afterEach(async () => {
    await twain?.close()
    twain = undefined
    rmTmp(dir)
  })

  it('rejects maxOpenFiles below 8 or not an integer, with the value in the message', async () => {
    dir = makeTmp()
    await expect(open(dir, { maxOpenFiles: 7 })).rejects.toThrow(InvalidArgumentError)
    await expect(open(dir, { maxOpenFiles: 7 })).rejects.toThrow(/maxOpenFiles.*7/)
    await expect(open(dir, { maxOpenFiles: 9.5 })).rejects.toThrow(/9\.5/)
    await expect(open(dir, { maxOpenFiles: '64' as unknown as number })).rejects.toThrow(/64/)
  })

  it('writes, reads, tails and consumes 40 partitions correctly through constant eviction (8 fds)', async () => {
    const P = 40
    dir = makeTmp()
    const base = fdCount()
    let max = 0
    const sample = () => (max = Math.max(max, fdCount() ?? 0))
    twain = await open(dir, { maxOpenFiles: 8, pollMs: 20, fsync: 20 })
    await twain.createTopic('w', { partitions: P, keyType: 'u32' })
    const p = twain.producer<string>('w')
    const round = (r: number) =>
      p.sendBatch(Array.from({ length: P }, (_, i) => ({ key: i, value: `r${r}-p${i}`, partition: i })))
    // Appenders are evicted between rounds and must continue at the right offsets.
    for (let r = 0; r < 3; r++) expect((await round(r)).map((m) => m.offset)).toEqual(new Array(P).fill(r))
    sample()
    const history = await collect(twain.history('w'))
    expect(history.map((m) => `${m.partition}@${m.offset}:${String(m.value)}`)).toEqual(
      Array.from({ length: P * 3 }, (_, k) => `${Math.floor(k / 3)}@${k % 3}:r${k % 3}-p${Math.floor(k / 3)}`),
    )
    const tail = twain.tail<string>('w', { from: 'start' })
    const it = tail[Symbol.asyncIterator]()
    const first: Message<string>[] = []
    while (first.length < P * 3) first.push((await it.next()).value as Message<string>)
    sample()
    // Every tail reader was evicted meanwhile: each resumes at its byte position, no repeats.
    await round(3)
    const more: Message<string>[] = []
    while (more.length < P) more.push((await it.next()).value as Message<string>)
    await it.return?.()
    expect(more.map((m) => m.offset)).toEqual(new Array(P).fill(3))
    expect(new Set(more.map((m) => m.partition)).size).toBe(P)
    const c = twain.consumer<string>('w', { group: 'g', from: 'start' })
    const got = await takeN(c, P * 4, 15_000)
    for (const m of got) m.ack()
    sample()
    await c.close()
    expect(new Set(got.map((m) => `${m.partition}@${m.offset}`)).size).toBe(P * 4)
    // 8 pooled fds, plus transient ones (locks, index look-ups) and the watchers' inotify fd.
    if (base !== undefined) expect(max - base).toBeLessThanOrEqual(8 + 12)
  })
})
