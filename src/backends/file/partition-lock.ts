import { randomBytes } from 'node:crypto'
import { basename, dirname, join } from 'node:path'
import { closeSync, linkSync, lstatSync, lutimesSync, openSync, readSync, renameSync, unlinkSync } from 'node:fs'
import { TimeoutError, backendError } from '../../core/errors.js'
import { processState, selfIdentity, type ProcessIdentity } from '../liveness.js'
import { READ_FLAGS, createFileWith, tempBeside } from './safe-fs.js'

/** Options of the cross-process partition lock. */
export interface LockOptions {
  /** Give up acquiring after this long. @default 30000 */
  acquireTimeoutMs?: number
  /**
   * Break a lock whose owner this process cannot see (another host or pid namespace) when it has
   * not been touched for this long. Locks of owners it can see are broken only when they are dead.
   * @default 20000
   */
  staleMs?: number
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

/** A `.want` marker older than this is left over by a waiter that died: ignored. */
const WANT_FRESH_MS = 1000
/** A lock file that is not a twainmq lock (empty, garbage) is broken once untouched this long. */
const GARBAGE_MS = 2000

interface LockContent extends ProcessIdentity {
  token: string
  /** Name of the owner file (beside the lock) that holds this content. */
  file?: string
}

/** How long an owner file is kept after the lock was released, for the next acquire. */
const OWNER_LINGER_MS = 1000

/** Owner files of this process, removed when it exits (a script that never calls `close()`). */
const ownerFiles = new Set<string>()
process.once('exit', () => {
  for (const f of ownerFiles) removeQuietly(f)
})

/**
 * An exclusive lock file holding its owner's identity (host, boot, pid namespace, pid and the pid's
 * start time) and a random token. See docs/format.md, "Locks", for why it can neither wedge nor be
 * broken under a live owner:
 * - the content is written to an owner file first and hard-linked into place, so a lock file is
 *   never empty or partial (a crash or ENOSPC can only leave the owner file);
 * - a lock is broken only when its owner is certainly dead (pid gone, reused or from before a
 *   reboot), or, for an owner this process cannot see, when untouched for `staleMs`; files that are
 *   not twainmq locks are broken once untouched for 2 s. A stopped (SIGSTOP) owner is alive: its
 *   lock is kept however long it sleeps, and waiters time out with a retriable `TimeoutError`;
 * - breaking renames the file aside and checks it moved the inode it judged, so two breakers
 *   cannot remove a fresh lock; holders re-check ownership before every write (`stillHeld`).
 *
 * The critical sections are synchronous page-cache operations (microseconds), so the lock is taken
 * and released with synchronous calls.
 */
export class PartitionLock {
  private readonly token = randomBytes(8).toString('hex')
  private readonly acquireTimeoutMs: number
  private readonly staleMs: number
  /** Inode of the lock file we linked; release removes the file only if it is still that one. */
  private ino = -1
  private owner: { path: string; ino: number } | undefined
  private lingerTimer: NodeJS.Timeout | undefined

  constructor(
    readonly path: string,
    options: LockOptions = {},
  ) {
    this.acquireTimeoutMs = options.acquireTimeoutMs ?? 30_000
    this.staleMs = options.staleMs ?? 20_000
  }

  /** Try once; true when acquired. Throws `BackendError` when the lock cannot be written (disk full, …). */
  tryAcquire(): boolean {
    clearTimeout(this.lingerTimer)
    // A release that could not remove the lock file left it this one's.
    if (this.ino >= 0 && this.stillHeld()) return true
    for (let attempt = 0; ; attempt++) {
      let owner: { path: string; ino: number }
      try {
        owner = this.ownerFile()
        linkSync(owner.path, this.path)
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code
        if (code === 'EEXIST') {
          this.breakIfDead()
          this.lingerOwnerFile()
          return false
        }
        this.owner = undefined // ENOENT: our owner file was removed; make a new one once
        if (code === 'ENOENT' && attempt === 0) continue
        throw backendError(`Cannot create lock ${this.path}`, e)
      }
      this.ino = owner.ino
      return true
    }
  }

  /**
   * The file holding this lock's content, hard-linked to the lock's name to take it: written once
   * and reused, so taking the lock is one `link` and releasing it one `unlink`. Removed a second
   * after the lock was last released (and by whoever breaks the lock of a dead owner).
   */
  private ownerFile(): { path: string; ino: number } {
    if (this.owner) return this.owner
    const path = tempBeside(this.path, 'owner')
    createFileWith(
      path,
      JSON.stringify({ ...selfIdentity(), token: this.token, file: basename(path) } satisfies LockContent),
    )
    this.owner = { path, ino: lstatSync(path).ino }
    ownerFiles.add(path)
    return this.owner
  }

  private lingerOwnerFile(): void {
    clearTimeout(this.lingerTimer)
    this.lingerTimer = setTimeout(() => this.dispose(), OWNER_LINGER_MS)
    this.lingerTimer.unref()
  }

  /** Remove the owner file now (when the lock is not held). */
  dispose(): void {
    clearTimeout(this.lingerTimer)
    if (!this.owner || this.ino >= 0) return
    removeQuietly(this.owner.path)
    ownerFiles.delete(this.owner.path)
    this.owner = undefined
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
          throw new TimeoutError(
            `Timed out after ${this.acquireTimeoutMs} ms waiting for lock ${this.path} (held by ${this.describeOwner()})`,
          )
        }
        // Short waits: holders yield soon once they see we want it, so poll often enough to catch it.
        wait = wait === 0 ? 1 : Math.min(wait * 2, 4)
        if (wait === 4) this.announce() // keep the marker fresh while we wait
      }
    } finally {
      try {
        unlinkSync(this.wantPath)
      } catch {
        /* gone */
      }
    }
  }

  /** `<lock>.want`: present while some process waits for the lock (holders that keep it yield then). */
  private get wantPath(): string {
    return `${this.path}.want`
  }

  private announce(): void {
    try {
      const now = new Date()
      if (lstatSync(this.wantPath, { throwIfNoEntry: false })?.isFile()) lutimesSync(this.wantPath, now, now)
      else {
        const tmp = tempBeside(this.wantPath)
        createFileWith(tmp, String(process.pid))
        renameSync(tmp, this.wantPath)
      }
    } catch {
      /* best effort: the holder then keeps its usual hold limits */
    }
  }

  /** Mark the lock as alive (a holder that keeps it for a long time must, or it looks hung). */
  touch(): void {
    try {
      const now = new Date()
      lutimesSync(this.path, now, now)
    } catch {
      /* gone: stillHeld() reports it */
    }
  }

  /** Whether another process is waiting for this lock (a fresh `.want` marker exists). */
  othersWaiting(): boolean {
    const st = lstatSync(this.wantPath, { throwIfNoEntry: false })
    return st !== undefined && Date.now() - st.mtimeMs < WANT_FRESH_MS
  }

  /** Whether the lock file is still the one we created (it was not broken meanwhile). */
  stillHeld(): boolean {
    return this.ino >= 0 && lstatSync(this.path, { throwIfNoEntry: false })?.ino === this.ino
  }

  /**
   * Release, unless the lock was broken meanwhile and now belongs to someone else. When the lock
   * file cannot be removed (a file system turned read-only) the lock stays this one's, taken again
   * by `tryAcquire` and released by a later `release`, and this throws `BackendError`.
   */
  release(): void {
    const ino = this.ino
    const mine = this.stillHeld()
    this.ino = -1
    this.lingerOwnerFile()
    if (!mine) return
    try {
      unlinkSync(this.path)
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return
      clearTimeout(this.lingerTimer)
      this.ino = ino
      throw backendError(`Cannot release lock ${this.path}`, e)
    }
  }

  private describeOwner(): string {
    const c = readLock(this.path)
    return c ? `pid ${c.pid} on ${c.host}` : 'an unreadable lock file'
  }

  private breakIfDead(): void {
    const st = lstatSync(this.path, { throwIfNoEntry: false })
    if (st === undefined) return
    const owner = readLock(this.path)
    const age = Date.now() - st.mtimeMs
    const state = owner ? processState(owner) : 'garbage'
    const broken =
      state === 'dead' || (state === 'unknown' && age > this.staleMs) || (state === 'garbage' && age > GARBAGE_MS)
    if (!broken) return
    const aside = tempBeside(this.path, 'broken')
    try {
      renameSync(this.path, aside)
    } catch {
      return // someone else broke or released it
    }
    if (lstatSync(aside, { throwIfNoEntry: false })?.ino !== st.ino) {
      // We moved a fresh lock taken after our check: put it back unless a newer one exists (its
      // owner's `stillHeld` check then tells it before it writes anything).
      try {
        linkSync(aside, this.path)
      } catch {
        /* a newer lock exists already */
      }
    }
    removeQuietly(aside)
    // A dead owner's owner file would stay behind: it is named in the lock.
    if (state === 'dead' && typeof owner?.file === 'string' && /^\.[^/\\]+\.owner-\d+-[0-9a-f]+$/.test(owner.file))
      removeQuietly(join(dirname(this.path), owner.file))
  }
}

function removeQuietly(path: string): void {
  try {
    unlinkSync(path)
  } catch {
    /* already gone */
  }
}

/** The owner recorded in a lock file; undefined when it is not a twainmq lock (empty, garbage, a link). */
function readLock(path: string): LockContent | undefined {
  let text: string
  try {
    const fd = openSync(path, READ_FLAGS)
    try {
      const buf = Buffer.alloc(4096)
      text = buf.toString('utf8', 0, readSync(fd, buf, 0, buf.length, 0))
    } finally {
      closeSync(fd)
    }
  } catch {
    return undefined
  }
  // `<pid> <token> <ms>`: a lock of twainmq before 0.2, judged by its pid alone.
  const legacy = /^(\d+) ([0-9a-f]+) \d+$/.exec(text)
  if (legacy) return { ...selfIdentity(), pid: Number(legacy[1]), start: '?', token: legacy[2] as string }
  try {
    const c = JSON.parse(text) as Partial<LockContent>
    const ok =
      typeof c.host === 'string' &&
      typeof c.boot === 'string' &&
      typeof c.ns === 'string' &&
      typeof c.start === 'string'
    return ok && Number.isSafeInteger(c.pid) && typeof c.token === 'string' ? (c as LockContent) : undefined
  } catch {
    return undefined
  }
}
