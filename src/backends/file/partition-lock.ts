import { closeSync, fstatSync, linkSync, openSync, readFileSync, renameSync, rmSync, statSync, unlinkSync, utimesSync, writeFileSync, writeSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { TimeoutError, backendError } from '../../core/errors.js'

/** Options of the cross-process partition lock. */
export interface LockOptions {
  /** Give up acquiring after this long. @default 30000 */
  acquireTimeoutMs?: number
  /** Break a lock held longer than this even if its owner is alive (hung or pid reused). @default 20000 */
  staleMs?: number
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

/** A `.want` marker older than this is left over by a waiter that died: ignored. */
const WANT_FRESH_MS = 1000

/**
 * An exclusive-create lock file holding `<pid> <token> <acquired ms>`. A lock whose owner process is
 * dead is broken at once; one older than `staleMs` is broken as hung. Breaking renames the file to a
 * unique name first and checks that what it renamed is the lock it judged dead, so two processes
 * breaking the same dead lock cannot remove a fresh one.
 *
 * The critical section is made of synchronous page-cache operations (microseconds), so the lock is
 * taken and released with synchronous calls: this keeps the hold time minimal.
 */
export class PartitionLock {
  private readonly token = randomBytes(8).toString('hex')
  private readonly acquireTimeoutMs: number
  private readonly staleMs: number
  /** Inode of the lock file we created; release removes the file only if it is still that one. */
  private ino = -1

  constructor(
    readonly path: string,
    options: LockOptions = {},
  ) {
    this.acquireTimeoutMs = options.acquireTimeoutMs ?? 30_000
    this.staleMs = options.staleMs ?? 20_000
  }

  /** Try once; true when acquired. */
  tryAcquire(): boolean {
    let fd: number
    try {
      fd = openSync(this.path, 'wx')
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') {
        this.breakIfDead()
        return false
      }
      throw backendError(`Cannot create lock ${this.path}`, e)
    }
    try {
      writeSync(fd, `${process.pid} ${this.token} ${Date.now()}`)
      this.ino = fstatSync(fd).ino
    } finally {
      closeSync(fd)
    }
    return true
  }

  /** Acquire, waiting with a short backoff; throws `TimeoutError` after `acquireTimeoutMs`. */
  async acquire(): Promise<void> {
    if (this.tryAcquire()) return
    const deadline = Date.now() + this.acquireTimeoutMs
    let wait = 0
    this.announce()
    try {
      for (;;) {
        if (wait === 0) await new Promise<void>((r) => setImmediate(r))
        else await sleep(wait)
        if (this.tryAcquire()) return
        if (Date.now() > deadline) {
          throw new TimeoutError(`Timed out after ${this.acquireTimeoutMs} ms waiting for lock ${this.path} (held by ${this.describeOwner()})`)
        }
        // Short waits: holders yield soon once they see we want it, so poll often enough to catch it.
        wait = wait === 0 ? 1 : Math.min(wait * 2, 4)
        if (wait === 4) this.announce() // keep the marker fresh while we wait
      }
    } finally {
      rmSync(this.wantPath, { force: true })
    }
  }

  /** `<lock>.want`: present while some process waits for the lock (holders that keep it yield then). */
  private get wantPath(): string {
    return `${this.path}.want`
  }

  private announce(): void {
    try {
      writeFileSync(this.wantPath, String(process.pid))
    } catch {
      /* best effort: the holder then keeps its usual hold limits */
    }
  }

  /** Mark the lock as alive (a holder that keeps it for a long time must, or it looks hung). */
  touch(): void {
    try {
      const now = new Date()
      utimesSync(this.path, now, now)
    } catch {
      /* gone: stillHeld() reports it */
    }
  }

  /** Whether another process is waiting for this lock (a fresh `.want` marker exists). */
  othersWaiting(): boolean {
    const st = statSync(this.wantPath, { throwIfNoEntry: false })
    return st !== undefined && Date.now() - st.mtimeMs < WANT_FRESH_MS
  }

  /** Whether the lock file is still the one we created (it was not broken as stale). */
  stillHeld(): boolean {
    return this.ino >= 0 && statSync(this.path, { throwIfNoEntry: false })?.ino === this.ino
  }

  /** Release, unless the lock was broken as stale meanwhile and now belongs to someone else. */
  release(): void {
    const st = statSync(this.path, { throwIfNoEntry: false })
    if (st === undefined || st.ino !== this.ino) return
    this.ino = -1
    try {
      unlinkSync(this.path)
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw backendError(`Cannot release lock ${this.path}`, e)
    }
  }

  private read(path: string): string | undefined {
    try {
      return readFileSync(path, 'utf8')
    } catch {
      return undefined
    }
  }

  private describeOwner(): string {
    return this.read(this.path)?.split(' ')[0] ?? 'nobody'
  }

  private breakIfDead(): void {
    const content = this.read(this.path)
    if (content === undefined) return
    const [pidText, , timeText] = content.split(' ')
    const pid = Number(pidText)
    const since = Number(timeText)
    // A lock file still being written (no time yet) belongs to a live creator; leave it.
    if (!Number.isInteger(pid) || !Number.isFinite(since)) return
    const dead = pid !== process.pid && !alive(pid)
    // Hung = not refreshed for staleMs: holders that keep the lock touch its mtime (see `touch`).
    const touched = statSync(this.path, { throwIfNoEntry: false })?.mtimeMs ?? since
    if (!dead && Date.now() - Math.max(since, touched) < this.staleMs) return
    const aside = `${this.path}.broken-${this.token}-${randomBytes(4).toString('hex')}`
    try {
      renameSync(this.path, aside)
    } catch {
      return // someone else broke or released it
    }
    if (this.read(aside) !== content) {
      // We moved a fresh lock taken after our check: put it back unless a newer one exists.
      try {
        linkSync(aside, this.path)
      } catch {
        /* a newer lock exists already; release() only ever removes a holder's own lock */
      }
    }
    try {
      unlinkSync(aside)
    } catch {
      /* already gone */
    }
  }
}
