// Fault test: the file system under a root turns read-only (remount, a failing disk) and back.
// Sends reject with a BackendError that says EROFS and is not retriable, nothing acknowledged is
// lost, and once the file system is writable again the same instance writes on (no restart).
import { afterAll, beforeAll, expect, it } from 'vitest'
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { open } from '../../src/index.js'
import { CLEAN, check, readBack } from '../helpers/checker.js'
import { mountTmpfs, type Tmpfs } from '../helpers/tmpfs.js'

let fs: Tmpfs
beforeAll(() => {
  fs = mountTmpfs({ size: '8m' })
})
afterAll(() => fs.unmount())

function remount(mode: 'ro' | 'rw'): void {
  const r = spawnSync('mount', ['-o', `remount,${mode}`, fs.dir], { encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`mount -o remount,${mode} ${fs.dir} failed (needs root): ${r.stderr}`)
}

it('a read-only file system: sends reject with a non-retriable EROFS BackendError, then resume when it is writable again', async () => {
  const acked: Array<{ id: string; partition: number; offset: number }> = []
  const first = await open(join(fs.dir, 'root'))
  await first.createTopic('t', { partitions: 2 })
  const p1 = first.producer<string>('t')
  for (let i = 0; i < 20; i++) acked.push({ id: `before-${i}`, ...(await p1.send(i, `before-${i}`)) })
  await first.close() // a file system with files open for writing cannot be remounted read-only
  remount('ro')
  const twain = await open(join(fs.dir, 'root'))
  try {
    const p = twain.producer<string>('t')
    const errors = await Promise.all(
      [0, 1, 2, 3].map((i) =>
        p.send(i, `ro-${i}`).then(
          () => undefined,
          (e: unknown) => e,
        ),
      ),
    )
    for (const e of errors)
      expect(e).toMatchObject({ name: 'BackendError', retriable: false, cause: { code: 'EROFS' } })
    remount('rw')
    for (let i = 0; i < 20; i++) acked.push({ id: `after-${i}`, ...(await p.send(i, `after-${i}`)) })
    const report = check(acked, await readBack(twain, 't'))
    expect(report.counts, report.text).toEqual(CLEAN)
  } finally {
    remount('rw')
    await twain.close()
  }
})
