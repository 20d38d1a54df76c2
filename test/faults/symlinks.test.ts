// Fault tests: symbolic links planted inside a root by a process that can write there. twainmq must
// never write through them (truncate, overwrite or create files elsewhere); a topic or group
// directory that is a link is refused with a clear error.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { open, type Twain } from '../../src/index.js'
import { PartitionLock } from '../../src/backends/file/partition-lock.js'
import { until } from '../helpers/spawn.js'
import { tempDir } from '../helpers/tmp.js'

const VICTIM_TEXT = 'precious data that twainmq must never touch\n'

let tmp: ReturnType<typeof tempDir>
let outside: ReturnType<typeof tempDir>
let twain: Twain
let victim: string

beforeEach(async () => {
  tmp = tempDir('twainmq-links-')
  outside = tempDir('twainmq-outside-')
  victim = join(outside.dir, 'victim')
  writeFileSync(victim, VICTIM_TEXT)
  twain = await open(join(tmp.dir, 'root'))
  await twain.createTopic('t')
})
afterEach(async () => {
  await twain.close()
  tmp.remove()
  outside.remove()
})

const root = () => join(tmp.dir, 'root')
const victimUntouched = () => expect(readFileSync(victim, 'utf8')).toBe(VICTIM_TEXT)

/** Replace `path` with a symlink to `target` (what an attacker with write access to the root does). */
function plantLink(path: string, target: string): void {
  rmSync(path, { recursive: true, force: true })
  symlinkSync(target, path)
}

describe('planted symlinks are never followed on write', () => {
  it('a segment file replaced by a link: the send rejects (not retriable, says so) and the target is untouched', async () => {
    plantLink(join(root(), 't', '0', '00000000000000000000.seg'), victim)
    const err = await twain
      .producer<string>('t')
      .send(1, 'x')
      .catch((e: unknown) => e)
    expect(err).toMatchObject({ name: 'BackendError', retriable: false })
    expect(String((err as Error).message)).toMatch(/symbolic link/)
    victimUntouched()
  })

  it('an index file replaced by a link: the send rejects and the target is untouched', async () => {
    plantLink(join(root(), 't', '0', '00000000000000000000.idx'), victim)
    await expect(twain.producer<string>('t').send(1, 'x')).rejects.toMatchObject({
      name: 'BackendError',
      retriable: false,
    })
    victimUntouched()
  })

  it('a lock file that is a link is broken as garbage (never written through) and the send goes on', async () => {
    plantLink(join(root(), 't', '0.lock'), victim)
    const r = await twain.producer<string>('t').send(1, 'x')
    expect(r).toEqual({ partition: 0, offset: 0 })
    victimUntouched()
  })

  it('a `.want` marker that is a link is replaced, not written through', async () => {
    const lockPath = join(root(), 't', '0.lock')
    plantLink(`${lockPath}.want`, victim)
    // One holder, one waiter: the waiter announces itself in `<lock>.want` while it waits.
    const holder = new PartitionLock(lockPath)
    const waiter = new PartitionLock(lockPath, { acquireTimeoutMs: 100 })
    expect(holder.tryAcquire()).toBe(true)
    const waiting = waiter.acquire().catch((e: unknown) => e)
    await until(() => !lstatSync(`${lockPath}.want`).isSymbolicLink(), 5_000, 'the waiter announcing itself')
    expect(await waiting).toMatchObject({ code: 'ERR_TIMEOUT' })
    holder.release()
    holder.dispose()
    waiter.dispose()
    victimUntouched()
  })

  it('a start mark that is a link: trim replaces the link and leaves its target alone', async () => {
    await twain.producer<string>('t').sendBatch([1, 2, 3].map((i) => ({ key: i, value: `v${i}` })))
    writeFileSync(victim, '0')
    plantLink(join(root(), 't', '0', 'start'), victim)
    expect(await twain.trim('t', { before: { 0: 2 } })).toBe(2)
    expect(readFileSync(victim, 'utf8')).toBe('0')
    expect(lstatSync(join(root(), 't', '0', 'start')).isSymbolicLink()).toBe(false)
    expect((await twain.describeTopic('t')).offsets[0]).toMatchObject({ start: 2, end: 3 })
  })

  it('a topic directory that is a link is refused with a clear error; nothing is written into its target', async () => {
    // A topic elsewhere, linked into the root under a new name.
    const elsewhere = join(outside.dir, 'elsewhere')
    renameSync(join(root(), 't'), elsewhere)
    symlinkSync(elsewhere, join(root(), 't'))
    const fresh = await open(root())
    try {
      const err = await fresh
        .producer<string>('t')
        .send(1, 'x')
        .catch((e: unknown) => e)
      expect(err).toMatchObject({ name: 'BackendError', retriable: false })
      expect(String((err as Error).message)).toMatch(/symbolic link/)
      expect(readdirSync(join(elsewhere, '0')).sort()).toEqual(['00000000000000000000.idx', '00000000000000000000.seg'])
      expect(readFileSync(join(elsewhere, '0', '00000000000000000000.seg')).length).toBe(0)
    } finally {
      await fresh.close()
    }
  })

  it('a partition directory that is a link is refused; its target gets no segment data', async () => {
    const elsewhere = join(outside.dir, 'p0')
    renameSync(join(root(), 't', '0'), elsewhere)
    symlinkSync(elsewhere, join(root(), 't', '0'))
    await expect(twain.producer<string>('t').send(1, 'x')).rejects.toMatchObject({
      name: 'BackendError',
      retriable: false,
    })
    expect(readFileSync(join(elsewhere, '00000000000000000000.seg')).length).toBe(0)
  })

  it('a group directory that is a link is refused; no group state is written into its target', async () => {
    const elsewhere = join(outside.dir, 'group')
    mkdirSync(elsewhere)
    mkdirSync(join(root(), '__groups'), { recursive: true })
    symlinkSync(elsewhere, join(root(), '__groups', 'g'))
    await twain.producer<string>('t').send(1, 'x')
    const consumer = twain.consumer<string>('t', { group: 'g', commitIntervalMs: 50 })
    const errors: unknown[] = []
    consumer.on('error', (e) => errors.push(e))
    const got = await (async () => {
      try {
        for await (const m of consumer) {
          m.ack()
          return 'delivered'
        }
        return 'ended'
      } catch (e) {
        return e
      }
    })()
    await consumer.close().catch(() => undefined)
    const seen = got instanceof Error ? got : errors[0]
    expect(seen, `consumer result: ${String(got)}`).toMatchObject({ name: 'BackendError', retriable: false })
    expect(String((seen as Error).message)).toMatch(/symbolic link/)
    expect(existsSync(join(elsewhere, 'state.json'))).toBe(false)
    unlinkSync(join(root(), '__groups', 'g'))
  })
})
