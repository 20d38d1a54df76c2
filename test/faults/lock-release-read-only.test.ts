// Fault test: the file system turns read-only while a writer keeps its partition lock between
// writes (HeldLock's hold). The hold's timer then cannot remove the lock file: that must neither
// throw out of the timer (an uncaught exception ends the process) nor leave a lock file that no
// process, this one included, ever takes again. The lock stays this writer's while the file
// system is read-only, and is released once it is writable again.
import { afterAll, afterEach, beforeAll, expect, it, vi } from 'vitest'
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { HeldLock } from '../../src/backends/file/held-lock.js'
import { mountTmpfs, type Tmpfs } from '../helpers/tmpfs.js'

let fs: Tmpfs
beforeAll(() => {
  fs = mountTmpfs({ size: '1m' })
})
afterEach(() => {
  vi.useRealTimers()
  remount('rw')
})
afterAll(() => fs.unmount())

function remount(mode: 'ro' | 'rw'): void {
  const r = spawnSync('mount', ['-o', `remount,${mode}`, fs.dir], { encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`mount -o remount,${mode} ${fs.dir} failed (needs root): ${r.stderr}`)
}

it('a hold that expires on a read-only file system keeps the lock, and releases it once the file system is writable', async () => {
  vi.useFakeTimers()
  const path = join(fs.dir, 'p.lock')
  const writer = new HeldLock(path)
  const other = new HeldLock(path, { acquireTimeoutMs: 50 })
  await writer.take()
  writer.written() // a write went through: the lock is kept a moment for the next one
  remount('ro')
  // The hold expires: removing the lock file fails with EROFS.
  expect(() => vi.advanceTimersByTime(50)).not.toThrow()
  expect(writer.owns()).toBe(true)
  expect(existsSync(path)).toBe(true)
  expect(() => other.tryNow()).toThrow(/EROFS/) // another writer cannot write either
  // The writer's next write may go on under the lock it still holds (and fails as the disk does).
  expect(writer.tryNow()).toBe(true)
  writer.written()
  expect(() => vi.advanceTimersByTime(50)).not.toThrow()
  remount('rw')
  expect(other.tryNow()).toBe(false) // still the writer's
  vi.advanceTimersByTime(2000) // the release tried again
  expect(existsSync(path)).toBe(false)
  expect(other.tryNow()).toBe(true)
  other.dispose()
  writer.dispose()
})

it('a writer whose lock release failed takes the lock again: it is still its own', async () => {
  const path = join(fs.dir, 'q.lock')
  const writer = new HeldLock(path)
  await writer.take()
  remount('ro')
  // A release on a failed write, say: the lock file stays, and it is the writer's.
  expect(() => writer.release()).toThrow(/EROFS|read-only/i)
  remount('rw')
  expect(writer.tryNow()).toBe(true)
  expect(writer.owns()).toBe(true)
  writer.dispose()
  expect(existsSync(path)).toBe(false)
})
