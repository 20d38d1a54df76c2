import { describe, expect, it } from 'vitest'
import { FdPool, type FdHolder } from '../../src/backends/file/fd-pool.js'
import { InvalidArgumentError } from '../../src/index.js'

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
    const rand = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n
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
