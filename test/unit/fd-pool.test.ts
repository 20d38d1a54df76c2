import { readdirSync } from 'node:fs'
import { afterEach, describe, expect, it } from 'vitest'
import { FdPool, type FdHolder } from '../../src/backends/file/fd-pool.js'
import { InvalidArgumentError, open, type Message, type Twain } from '../../src/index.js'
import { collect, makeTmp, rmTmp, takeN } from './helpers.js'

/** A holder that tracks the fds it "has", as a reader or appender would. */
class Fake implements FdHolder {
  fds = 0
  evictions = 0
  using = false
  constructor(
    readonly name: string,
    private readonly pool: FdPool,
    private readonly reportOnEvict = false,
  ) {}
  open(n = 1): void {
    this.pool.opening(this, n)
    this.fds += n
  }
  close(n = 1): void {
    this.fds -= n
    this.pool.closed(this, n)
  }
  closeFds(): void {
    this.evictions++
    if (this.reportOnEvict) this.pool.closed(this, this.fds) // allowed, and must not count twice
    this.fds = 0
  }
  inUse(): boolean {
    return this.using
  }
}

const holders = (pool: FdPool, ...names: string[]) => names.map((n) => new Fake(n, pool))

describe('FdPool', () => {
  it('evicts the least recently used holder first; a touch makes a holder the most recent', () => {
    const pool = new FdPool(3)
    const [a, b, c, d, e] = holders(pool, 'a', 'b', 'c', 'd', 'e') as [Fake, Fake, Fake, Fake, Fake]
    a.open()
    b.open()
    c.open()
    d.open() // a is the oldest
    expect([a.evictions, b.evictions, c.evictions]).toEqual([1, 0, 0])
    pool.touch(b) // order now c, d, b
    e.open()
    expect([b.evictions, c.evictions, d.evictions]).toEqual([0, 1, 0])
    expect(pool.open).toBe(3)
    expect(pool.evicted).toBe(2)
  })

  it('never evicts the holder that is opening, and a holder with several fds is closed whole', () => {
    const pool = new FdPool(3)
    const [a, b] = holders(pool, 'a', 'b') as [Fake, Fake]
    a.open(2)
    b.open()
    a.open() // a is the opener: b goes
    expect([a.evictions, b.evictions]).toEqual([0, 1])
    expect(pool.open).toBe(3)
    b.open(2) // a (3 fds) goes whole
    expect(a.evictions).toBe(1)
    expect(pool.open).toBe(2)
  })

  it('never evicts a holder busy in an async operation, and takes it back as most recent afterwards', async () => {
    const pool = new FdPool(2)
    const [a, b, c, d] = holders(pool, 'a', 'b', 'c', 'd') as [Fake, Fake, Fake, Fake]
    a.open()
    b.open()
    let release!: () => void
    const sync = pool.busy(a, () => new Promise<void>((r) => (release = r))) // an fdatasync in flight on a's fd
    c.open() // a is the oldest but busy: b goes
    d.open() // c goes
    expect([a.evictions, b.evictions, c.evictions]).toEqual([0, 1, 1])
    release()
    await sync
    b.open() // a is idle again, now the most recent after d: d goes
    expect([a.evictions, d.evictions]).toEqual([0, 1])
    c.open() // a goes
    expect(a.evictions).toBe(1)
  })

  it('skips holders reporting inUse, and goes over the cap only while every other holder is busy', () => {
    const pool = new FdPool(2)
    const [a, b, c] = holders(pool, 'a', 'b', 'c') as [Fake, Fake, Fake]
    a.open()
    b.open()
    a.using = true
    b.using = true
    c.open() // nobody can go
    expect([a.evictions, b.evictions]).toEqual([0, 0])
    expect(pool.open).toBe(3)
    b.using = false
    c.open() // room for it: b goes; a stays
    expect([a.evictions, b.evictions]).toEqual([0, 1])
    expect(pool.open).toBe(3) // a 1, c 2: still over while a is busy
    a.using = false
    b.open()
    expect(a.evictions).toBe(1)
    expect(pool.open).toBeLessThanOrEqual(2)
  })

  it('keeps the count exact through opens, own closes, evictions (reporting or not), holds and forgets', () => {
    const pool = new FdPool(10)
    const all = Array.from({ length: 60 }, (_, i) => new Fake(`h${i}`, pool, i % 2 === 0))
    let seed = 7
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % n)
    for (let step = 0; step < 5000; step++) {
      const h = all[rand(all.length)] as Fake
      const op = rand(5)
      if (op <= 1) h.open(1 + rand(2))
      else if (op === 2 && h.fds > 0) h.close(1)
      else if (op === 3) pool.touch(h)
      else if (op === 4 && rand(10) === 0) {
        pool.forget(h)
        h.fds = 0
      }
      const held = all.reduce((n, x) => n + x.fds, 0)
      expect(pool.open).toBe(held)
      expect(held).toBeLessThanOrEqual(10)
    }
  })

  it('rejects a cap that is not a positive integer', () => {
    expect(() => new FdPool(0)).toThrow(InvalidArgumentError)
    expect(() => new FdPool(2.5)).toThrow(/2\.5/)
  })
})

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
    const round = (r: number) => p.sendBatch(Array.from({ length: P }, (_, i) => ({ key: i, value: `r${r}-p${i}`, partition: i })))
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
