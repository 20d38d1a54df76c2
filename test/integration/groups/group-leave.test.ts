// Leaving a consumer group (file backend): leaving a group that no longer exists is a no-op, as on
// Redis; a leave that cannot be written (the store's file system turned read-only: a real tmpfs
// remounted ro, so root needed) rejects instead of being swallowed (a consumer's close() reports
// it as an 'error' event).
import { spawnSync } from 'node:child_process'
import { afterEach, describe, expect, it } from 'vitest'
import { FileBackend } from '../../../src/backends/file/file-backend.js'
import { HOST } from '../../../src/backends/liveness.js'
import { TwainError } from '../../../src/index.js'
import { mountTmpfs, type Tmpfs } from '../../helpers/tmpfs.js'

const member = { id: 'm1', name: 'm1', topics: ['t'], sessionTimeoutMs: 30_000, pid: process.pid, host: HOST }
let fs: Tmpfs | undefined
afterEach(() => {
  if (fs) remount(fs, 'rw')
  fs?.unmount()
  fs = undefined
})

function remount(t: Tmpfs, mode: 'ro' | 'rw'): void {
  const r = spawnSync('mount', ['-o', `remount,${mode}`, t.dir], { encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`mount -o remount,${mode} ${t.dir} failed: ${r.stderr}`)
}

describe('groupLeave (file backend)', () => {
  it('of a group that does not exist resolves; one that cannot be written rejects', async () => {
    fs = mountTmpfs()
    const b = new FileBackend(fs.dir)
    await b.init()
    try {
      await b.createTopic({
        name: 't',
        partitions: 1,
        keyType: 'u16',
        messageTypes: [],
        retention: {},
        maxMessageBytes: 1 << 20,
        createdAt: Date.now(),
      })
      await expect(b.groups.groupLeave('never-made', 'm1')).resolves.toBeUndefined()
      await b.groups.groupHeartbeat('g', member, [])
      remount(fs, 'ro')
      const err = await b.groups.groupLeave('g', 'm1').then(
        () => undefined,
        (e: unknown) => e,
      )
      expect(err).toBeInstanceOf(TwainError)
    } finally {
      await b.close()
    }
  })
})
