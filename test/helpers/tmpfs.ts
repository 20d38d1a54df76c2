// A real, small tmpfs for disk-full tests: `mount -t tmpfs -o size=…[,nr_inodes=…] tmpfs DIR`.
// Mounting needs root (or CAP_SYS_ADMIN). If it fails, mountTmpfs THROWS with the reason: a
// disk-full test must never silently skip or pass without a full disk.
import { spawnSync } from 'node:child_process'
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, statfsSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export interface Tmpfs {
  dir: string
  /** Unmount (lazily if busy) and remove the mount point. Safe to call twice. */
  unmount: () => void
}

function run(cmd: string, args: string[]): { ok: boolean; text: string } {
  const r = spawnSync(cmd, args, { encoding: 'utf8' })
  if (r.error) return { ok: false, text: `${cmd}: ${r.error.message}` }
  return {
    ok: r.status === 0,
    text: `${cmd} ${args.join(' ')} exited ${r.status ?? r.signal}: ${(r.stderr || r.stdout).trim()}`,
  }
}

export function mountTmpfs(options: { size?: string; nrInodes?: number } = {}): Tmpfs {
  const dir = mkdtempSync(join(tmpdir(), 'twainmq-tmpfs-'))
  const opts = [`size=${options.size ?? '2m'}`]
  if (options.nrInodes !== undefined) opts.push(`nr_inodes=${options.nrInodes}`)
  const r = run('mount', ['-t', 'tmpfs', '-o', opts.join(','), 'tmpfs', dir])
  if (!r.ok) {
    rmSync(dir, { recursive: true, force: true })
    throw new Error(
      `Cannot mount a tmpfs for the disk-full tests (they need root / CAP_SYS_ADMIN; they do not skip): ${r.text}`,
    )
  }
  let mounted = true
  return {
    dir,
    unmount: () => {
      if (!mounted) return
      let u = run('umount', [dir])
      if (!u.ok) u = run('umount', ['-l', dir]) // something still holds a file there: detach lazily
      if (!u.ok) throw new Error(`Cannot unmount ${dir}: ${u.text}`)
      mounted = false
      // No longer a mount point: remove it, and whatever a leaked (wedged) handle of a failed test
      // re-creates there before this process exits.
      rmSync(dir, { recursive: true, force: true })
      process.once('exit', () => rmSync(dir, { recursive: true, force: true }))
    },
  }
}

/** Bytes an unprivileged writer may still use on the filesystem holding `dir`. */
export function freeBytes(dir: string): number {
  const s = statfsSync(dir)
  return s.bavail * s.bsize
}

/** Free inodes on the filesystem holding `dir`. */
export function freeInodes(dir: string): number {
  return statfsSync(dir).ffree
}

/**
 * Write the file `path` (on the tmpfs) so that only about `leaveBytes` stay free (tmpfs counts whole
 * 4 KiB pages). Stops at ENOSPC. Returns the bytes left free afterwards.
 */
export function fillLeaving(mountDir: string, path: string, leaveBytes: number): number {
  const target = freeBytes(mountDir) - leaveBytes
  const fd = openSync(path, 'a')
  try {
    const chunk = Buffer.alloc(64 * 1024, 0x5a)
    let written = 0
    while (written < target) {
      const n = Math.min(chunk.length, target - written)
      try {
        written += writeSync(fd, chunk, 0, n)
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOSPC') break
        throw e
      }
    }
  } finally {
    closeSync(fd)
  }
  return freeBytes(mountDir)
}

/** Create empty files in `dir` (created here) until only `leave` inodes are free. Returns the count left free. */
export function fillInodesLeaving(mountDir: string, dir: string, leave: number): number {
  mkdirSync(dir, { recursive: true })
  let i = 0
  while (freeInodes(mountDir) > leave) {
    try {
      closeSync(openSync(join(dir, `i${i++}`), 'wx'))
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOSPC') break
      throw e
    }
  }
  return freeInodes(mountDir)
}
