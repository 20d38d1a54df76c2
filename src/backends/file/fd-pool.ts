import { openSync } from 'node:fs'
import { InvalidArgumentError, backendError } from '../../core/errors.js'

/**
 * Something that keeps file descriptors open between uses (a partition reader, an appender) and
 * can reopen them lazily on its next use.
 */
export interface FdHolder {
  /**
   * Close every fd now, synchronously, keeping whatever makes reopening cheap (segment and byte
   * position). The pool calls it only while the holder is not busy, and never from inside the
   * holder's own `opening` call. Calling `closed` from here is allowed (and ignored).
   */
  closeFds(): void
  /**
   * For a holder that counts its own async operations (the appender's `busy`): true while one is
   * in flight, so it is skipped. `FdPool.busy` does the same for holders that do not count.
   */
  inUse?(): boolean
}

interface Account {
  fds: number
  /** Async operations in flight on these fds (nesting allowed). */
  busy: number
}

/**
 * A cap on the file descriptors a store keeps open, shared by all its readers and appenders.
 *
 * Why: a 10,000-partition topic read, tailed and written by one process would otherwise keep one
 * to three fds per partition for as long as the stream lives, far past a default `ulimit -n` of
 * 1024. Holders report the fds they open and close; when an open would pass the cap, the
 * least-recently-used holders that are not busy are asked to close theirs (`closeFds`). Reads are
 * synchronous, so a holder can only be caught using an fd across an `await` (an `fdatasync`):
 * it marks itself busy for that time and is never evicted then. If every other holder is busy the
 * open proceeds over the cap (failing an operation is worse than briefly exceeding a soft limit).
 *
 * All operations are O(1) (amortised): idle holders sit in a Map in LRU order, busy ones in another.
 * Transient fds opened and closed within one call (index look-ups, lock files) are not counted.
 */
export class FdPool {
  /** Least recently used first. Only holders with fds and nothing in flight. */
  private readonly idle = new Map<FdHolder, Account>()
  private readonly inFlight = new Map<FdHolder, Account>()
  private total = 0
  private evictions = 0

  constructor(readonly cap: number) {
    if (!Number.isInteger(cap) || cap < 1)
      throw new InvalidArgumentError(`FdPool cap must be a positive integer, got ${String(cap)}`)
  }

  /** Fds held by registered holders now. */
  get open(): number {
    return this.total
  }

  /** How many times a holder was asked to close its fds (for tests and diagnostics). */
  get evicted(): number {
    return this.evictions
  }

  /** `h` is about to open `n` fds: make room (evicting others, never `h`), count them, mark `h` most recently used. */
  opening(h: FdHolder, n = 1): void {
    const acc = this.detach(h)
    this.makeRoom(n)
    acc.fds += n
    this.total += n
    this.attach(h, acc)
  }

  /** `h` closed `n` of its fds itself (a segment switch, a seek, its own close). */
  closed(h: FdHolder, n = 1): void {
    const acc = this.idle.get(h) ?? this.inFlight.get(h)
    if (!acc) return
    const k = Math.min(n, acc.fds)
    acc.fds -= k
    this.total -= k
    if (acc.fds === 0 && acc.busy === 0) this.idle.delete(h)
  }

  /**
   * Set `h`'s count to `n` (for a holder whose opens the pool does not see one by one: counted
   * as holding `n` until it is evicted or forgotten). Growing makes room like `opening`.
   */
  hold(h: FdHolder, n: number): void {
    const acc = this.detach(h)
    if (n > acc.fds) this.makeRoom(n - acc.fds)
    this.total += n - acc.fds
    acc.fds = n
    this.attach(h, acc)
  }

  /** `h` used its fds: it becomes the most recently used. */
  touch(h: FdHolder): void {
    const acc = this.idle.get(h)
    if (acc === undefined) return
    this.idle.delete(h)
    this.idle.set(h, acc)
  }

  /** Run `op` (which uses `h`'s fds across awaits) with `h` protected from eviction. */
  async busy<T>(h: FdHolder, op: () => Promise<T>): Promise<T> {
    const acc = this.detach(h)
    acc.busy++
    this.attach(h, acc)
    try {
      return await op()
    } finally {
      const cur = this.detach(h)
      cur.busy--
      this.attach(h, cur)
    }
  }

  /** `h` closed everything for good (or will): stop counting it. */
  forget(h: FdHolder): void {
    const acc = this.idle.get(h) ?? this.inFlight.get(h)
    if (!acc) return
    this.total -= acc.fds
    this.idle.delete(h)
    this.inFlight.delete(h)
  }

  /** Remove `h` from both maps (so it cannot be evicted meanwhile) and return its account. */
  private detach(h: FdHolder): Account {
    const acc = this.idle.get(h) ?? this.inFlight.get(h) ?? { fds: 0, busy: 0 }
    this.idle.delete(h)
    this.inFlight.delete(h)
    return acc
  }

  /** Put `h` back: busy ones aside, idle ones as most recently used, empty ones nowhere. */
  private attach(h: FdHolder, acc: Account): void {
    if (acc.busy > 0) this.inFlight.set(h, acc)
    else if (acc.fds > 0) this.idle.set(h, acc)
  }

  private makeRoom(n: number): void {
    let skipped = 0
    while (this.total + n > this.cap) {
      const lru = this.idle.entries().next()
      // Everyone else is busy: go over the cap rather than break an operation in flight.
      if (lru.done || skipped >= this.idle.size) return
      const [h, acc] = lru.value
      this.idle.delete(h)
      if (h.inUse?.()) {
        this.idle.set(h, acc) // in use after all: to the back, try the next
        skipped++
        continue
      }
      this.evictions++
      try {
        h.closeFds()
      } catch {
        /* a failed close still releases the descriptor (close(2) frees it even on error) */
      } finally {
        this.total -= acc.fds
        acc.fds = 0
      }
    }
  }
}

/** Open the segment at `path` read-only for `holder`, counted by `pool`; undefined when it does not exist. */
export function openSegmentFd(path: string, holder: FdHolder, pool: FdPool | undefined): number | undefined {
  pool?.opening(holder)
  try {
    return openSync(path, 'r')
  } catch (e) {
    pool?.closed(holder)
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw backendError(`Cannot open segment ${path}`, e)
  }
}
