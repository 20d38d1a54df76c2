import { randomBytes } from 'node:crypto'
import {
  closeSync,
  constants,
  fsyncSync,
  lstatSync,
  openSync,
  readSync,
  renameSync,
  unlinkSync,
  writeSync,
} from 'node:fs'
import { dirname, join, basename } from 'node:path'
import { BackendError, backendError } from '../../core/errors.js'

/*
 * File operations that cannot be redirected by symbolic links planted inside the root, and writes
 * that never leave a short write unnoticed. Every file twainmq writes is opened with O_NOFOLLOW,
 * created exclusively (O_EXCL) under a fresh random name and renamed into place (rename replaces a
 * link, it never writes through it), and directories it writes into are checked with lstat.
 */
const { O_RDWR, O_WRONLY, O_RDONLY, O_CREAT, O_EXCL, O_APPEND, O_NOFOLLOW, O_NONBLOCK } = constants

/** Open (creating if absent) for appending and reading, never through a symlink. */
export const APPEND_FLAGS = O_RDWR | O_CREAT | O_APPEND | O_NOFOLLOW
/** Create a new file for writing; fails when anything (a file or a link) has that name. */
export const CREATE_FLAGS = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW
/** Open for reading, never through a symlink, never blocking on a FIFO. */
export const READ_FLAGS = O_RDONLY | O_NOFOLLOW | O_NONBLOCK

/**
 * Write all of `buf[offset, offset+length)` at `position` (or at the end for O_APPEND files when
 * `position` is null), looping over short writes. A write that fails part-way throws (ENOSPC on
 * the next call, typically); the caller decides what to do with the bytes already written.
 */
export function writeAll(fd: number, buf: Uint8Array, offset: number, length: number, position: number | null): void {
  let done = 0
  while (done < length) {
    const n = writeSync(fd, buf, offset + done, length - done, position === null ? null : position + done)
    if (n <= 0) throw Object.assign(new Error(`write returned ${n} after ${done} of ${length} bytes`), { code: 'EIO' })
    done += n
  }
}

/** A fresh unguessable name beside `path`, for a file to create exclusively and rename over it. */
export function tempBeside(path: string, tag = 'tmp'): string {
  return join(dirname(path), `.${basename(path)}.${tag}-${process.pid}-${randomBytes(6).toString('hex')}`)
}

/** Create `path` exclusively with `data` (removing it again when writing fails). */
export function createFileWith(path: string, data: string | Uint8Array, durable = false): void {
  const fd = openSync(path, CREATE_FLAGS, 0o644)
  try {
    const bytes = typeof data === 'string' ? Buffer.from(data) : data
    writeAll(fd, bytes, 0, bytes.length, null)
    if (durable) fsyncSync(fd)
  } catch (e) {
    closeSync(fd)
    try {
      unlinkSync(path)
    } catch {
      /* already gone */
    }
    throw e
  }
  closeSync(fd)
}

/**
 * Replace `path` atomically with `data`: written to a temporary file created exclusively beside it,
 * then renamed over it. Readers see the old content or the new, never a part; a symlink at `path`
 * is replaced, not followed. Errors are `BackendError`s (`ERR_DISK_FULL` when the disk is full).
 */
export function replaceFile(path: string, data: string | Uint8Array, durable = false): void {
  const tmp = tempBeside(path)
  try {
    createFileWith(tmp, data, durable)
    renameSync(tmp, path)
  } catch (e) {
    try {
      unlinkSync(tmp)
    } catch {
      /* not created, or renamed */
    }
    throw backendError(`Cannot write ${path}`, e)
  }
}

/**
 * Throw unless `path` is a real directory (not a symlink to one). Returns false when it does not
 * exist. Used for the topic, partition and group directories twainmq writes into.
 */
export function isRealDir(path: string, what: string): boolean {
  const st = lstatSync(path, { throwIfNoEntry: false })
  if (st === undefined) return false
  if (st.isSymbolicLink()) {
    throw new BackendError(
      `Refusing to use ${what} ${path}: it is a symbolic link (twainmq never writes through links inside its root)`,
      { retriable: false },
    )
  }
  if (!st.isDirectory())
    throw new BackendError(`Refusing to use ${what} ${path}: it is not a directory`, { retriable: false })
  return true
}

/** Read up to `want` bytes at `pos` into `buf`, looping over short reads; returns how many were read (fewer at the end of the file). */
export function readFull(fd: number, buf: Buffer, want: number, pos: number): number {
  let got = 0
  while (got < want) {
    const n = readSync(fd, buf, got, want - got, pos + got)
    if (n === 0) break
    got += n
  }
  return got
}

/** Make creates and renames in `dir` durable (fsync of the directory). */
export function syncDirSync(dir: string): void {
  const dfd = openSync(dir, 'r')
  try {
    fsyncSync(dfd)
  } finally {
    closeSync(dfd)
  }
}

/** Close `fd`, ignoring a failure (it was closed already, or the file system went away). */
export function closeQuietly(fd: number): void {
  try {
    closeSync(fd)
  } catch {
    /* already closed */
  }
}
