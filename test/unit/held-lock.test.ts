// The append lock kept between writes (held-lock.ts): through short pauses while no other process
// waits for it, given up at once to one that does, and never past `HOLD_QUIET_MS` of quiet.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { existsSync, lstatSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { HeldLock, HOLD_IDLE_MS, HOLD_QUIET_MS } from '../../src/backends/file/held-lock.js'
import { tempDir } from '../helpers/tmp.js'

let tmp: ReturnType<typeof tempDir>
let path: string
let lock: HeldLock

beforeEach(() => {
  tmp = tempDir('twainmq-held-lock-')
  path = join(tmp.dir, '0.lock')
  // Timers and the clock both fake, the clock starting at the real time (the `.want` marker's mtime is real).
  vi.useFakeTimers({ now: Date.now() })
  lock = new HeldLock(path)
})
afterEach(() => {
  lock.dispose()
  vi.useRealTimers()
  tmp.remove()
})

/** Take the lock and make a write under it, as an appender does. */
function write(): number {
  expect(lock.tryNow()).toBe(true)
  expect(lock.owns()).toBe(true)
  lock.written()
  return lstatSync(path).ino
}

describe('HeldLock', () => {
  it('keeps the lock through pauses shorter than HOLD_QUIET_MS while nobody waits, reusing it', () => {
    const ino = write()
    for (let t = 0; t < HOLD_QUIET_MS - HOLD_IDLE_MS; t += HOLD_IDLE_MS) {
      vi.advanceTimersByTime(HOLD_IDLE_MS)
      expect(existsSync(path), `held ${t + HOLD_IDLE_MS} ms after the write`).toBe(true)
    }
    // The next write takes the same lock file (no new link): the lock was never given up.
    expect(write()).toBe(ino)
    vi.advanceTimersByTime(HOLD_QUIET_MS - HOLD_IDLE_MS)
    expect(existsSync(path)).toBe(true)
  })

  it('gives the lock up once HOLD_QUIET_MS pass with no write', () => {
    write()
    vi.advanceTimersByTime(HOLD_QUIET_MS)
    expect(existsSync(path)).toBe(false)
  })

  it('gives the lock up at the next look when another process waits (a fresh .want marker)', () => {
    write()
    vi.advanceTimersByTime(HOLD_IDLE_MS)
    expect(existsSync(path)).toBe(true)
    writeFileSync(`${path}.want`, '12345')
    vi.advanceTimersByTime(HOLD_IDLE_MS)
    expect(existsSync(path)).toBe(false)
  })

  it('keeps it when the .want marker is stale (left by a waiter that died)', () => {
    writeFileSync(`${path}.want`, '12345')
    write()
    // Fresh for a second after its mtime; the clock moves on, the marker does not.
    vi.setSystemTime(Date.now() + 5000)
    vi.advanceTimersByTime(HOLD_IDLE_MS * 2)
    expect(existsSync(path)).toBe(true)
  })
})
