// Fault test: compaction passes SIGKILLed at random points. Each round the parent appends updates of
// 16 keys over 1 KiB segments (its own background passes run meanwhile), holds a reader part-way
// through the log, starts a child running compaction passes, and kills it with SIGKILL 0–1600 ms
// after it started. Then: a fresh reader finds every key's latest record, and only records the
// parent wrote, at their offsets and in order; the held reader goes on reading from where it was
// and finds every key's latest record at or past its position; `check` finds no damage. At the end
// a pass leaves exactly the latest record of each key and no temporary file of a killed pass.
// Second case: two processes run passes over the same partition at once while a third appends (its
// own background passes running too): every pass finishes (a segment another pass merged away
// meanwhile is not an error), and the log keeps every latest record.
import { readdirSync } from 'node:fs'
import type { ChildProcess } from 'node:child_process'
import { afterEach, describe, expect, it } from 'vitest'
import type { Backend, TopicMeta } from '../../src/backends/backend.js'
import { checkPartition } from '../../src/backends/file/check.js'
import { FileBackend } from '../../src/backends/file/file-backend.js'
import { partitionDir } from '../../src/backends/file/layout.js'
import type { Message } from '../../src/core/types.js'
import { readAll, records, topicMeta } from '../contract/fixture.js'
import { exited, killChildren, lines, spawnChild, until } from '../helpers/spawn.js'
import { tempDir } from '../helpers/tmp.js'
import { sleep } from '../helpers/wait.js'

const KEYS = 16
const DELAYS_MS = [0, 3, 10, 25, 50, 100, 200, 400, 800, 1600]
const meta: TopicMeta = topicMeta('c', { compact: true, tombstoneRetentionMs: 86_400_000 })

let tmp: ReturnType<typeof tempDir> | undefined
let store: FileBackend | undefined
const children: ChildProcess[] = []

afterEach(async () => {
  await killChildren(children)
  await store?.close()
  store = undefined
  tmp?.remove()
  tmp = undefined
})

/** Append `n` updates in batches of 1–4 records; the model gets each record at its offset. */
async function appendUpdates(b: Backend, sent: Array<{ key: number; value: string }>, n: number): Promise<void> {
  for (let done = 0; done < n;) {
    const batch = Array.from({ length: Math.min(1 + (done % 4), n - done) }, (_, i) => {
      const key = (sent.length + i) % KEYS
      return { key, value: `${key}@${sent.length + i}` }
    })
    expect(await b.append('c', 0, records(meta, batch), 'p')).toBe(sent.length)
    sent.push(...batch)
    done += batch.length
  }
}

/** Every key's latest offset in the model. */
function latestOffsets(sent: ReadonlyArray<{ key: number }>): Map<number, number> {
  const latest = new Map<number, number>()
  sent.forEach((r, offset) => latest.set(r.key, offset))
  return latest
}

/** Records read are the model's at their offsets, in increasing order; the latest of each key at or past `from` is among them. */
function expectGenuine(
  read: readonly Message[],
  sent: ReadonlyArray<{ key: number; value: string }>,
  from: number,
): void {
  const offsets = read.map((m) => m.offset)
  for (let i = 1; i < offsets.length; i++) expect(offsets[i]).toBeGreaterThan(offsets[i - 1] as number)
  for (const m of read) expect([m.key, m.value]).toEqual([sent[m.offset]?.key, sent[m.offset]?.value])
  for (const offset of latestOffsets(sent).values()) if (offset >= from) expect(offsets).toContain(offset)
}

describe('compaction killed with SIGKILL', () => {
  it('loses no latest value and no record a reader has not passed; check finds no damage; the next pass finishes the work', async () => {
    tmp = tempDir('twainmq-faults-compact-')
    store = new FileBackend(tmp.dir, { segmentBytes: 1024 })
    await store.init()
    await store.createTopic(meta)
    const sent: Array<{ key: number; value: string }> = []
    const dir = partitionDir(tmp.dir, 'c', 0)
    for (const [round, delay] of DELAYS_MS.entries()) {
      await appendUpdates(store, sent, 400)
      const heldFrom = Math.floor((sent.length * round) / DELAYS_MS.length)
      const held = await store.openReader('c', 0, heldFrom)
      try {
        const first = await held.read(3)
        const position = held.next
        const child = spawnChild('compact-loop.ts', [tmp.dir, 'c'])
        children.push(child)
        const out = lines(child)
        await until(() => out.lines.includes('# started') || child.exitCode !== null, 60_000, 'the child started')
        expect(child.exitCode, out.stderr()).toBeNull()
        await sleep(delay)
        child.kill('SIGKILL')
        expect(await exited(child), out.stderr()).toBe('SIGKILL')

        expectGenuine(await readAll(store, 'c'), sent, 0)
        const rest: Message[] = []
        for (let got = await held.read(50); got.length > 0; got = await held.read(50)) rest.push(...got)
        expectGenuine([...first, ...rest], sent, heldFrom)
        expect(rest.every((m) => m.offset >= position)).toBe(true)
        expect(checkPartition(dir, 0, 'c', true).damage).toEqual([])
      } finally {
        await held.close()
      }
    }
    await store.compact('c')
    const left = await readAll(store, 'c')
    expect(left.map((m) => m.offset)).toEqual([...latestOffsets(sent).values()].sort((a, b) => a - b))
    expectGenuine(left, sent, 0)
    expect(readdirSync(dir).filter((n) => n.includes('.compact-'))).toEqual([])
    expect(await store.append('c', 0, records(meta, [{ key: 1, value: 'next' }]), 'p')).toBe(sent.length)
  }, 240_000)

  it('passes of two processes at once, while a third appends with its own passes, all finish and lose nothing', async () => {
    tmp = tempDir('twainmq-faults-compact-')
    store = new FileBackend(tmp.dir, { segmentBytes: 1024 })
    await store.init()
    await store.createTopic(meta)
    const sent: Array<{ key: number; value: string }> = []
    const runners = [0, 1].map(() => {
      const child = spawnChild('compact-loop.ts', [tmp!.dir, 'c'])
      children.push(child)
      return { child, out: lines(child) }
    })
    const passes = (r: (typeof runners)[number]): number => r.out.lines.filter((l) => l.startsWith('# pass ')).length
    const failed = (): string | undefined => {
      const r = runners.find((x) => x.child.exitCode !== null || x.child.signalCode !== null)
      return r === undefined ? undefined : `a compaction process exited (${r.child.exitCode}): ${r.out.stderr()}`
    }
    for (let round = 0; round < 24; round++) {
      const before = runners.map(passes)
      await appendUpdates(store, sent, 400)
      // Each process finishes a pass that began after these appends did.
      await until(
        () => failed() !== undefined || runners.every((r, i) => passes(r) >= (before[i] as number) + 2),
        120_000,
        'a pass of each process',
      )
      expect(failed()).toBeUndefined()
    }
    await killChildren(children)
    expectGenuine(await readAll(store, 'c'), sent, 0)
    expect(checkPartition(partitionDir(tmp.dir, 'c', 0), 0, 'c', true).damage).toEqual([])
    await store.compact('c')
    expect((await readAll(store, 'c')).map((m) => m.offset)).toEqual(
      [...latestOffsets(sent).values()].sort((a, b) => a - b),
    )
  }, 240_000)
})
