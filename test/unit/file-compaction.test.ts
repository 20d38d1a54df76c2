/**
 * File compaction beyond the backend contract: the background pass after rolls, what `check` says
 * of a compacted segment (gaps counted, damage still found), a segment left without its indexes by
 * a crash inside the renames (read by a scan, given new indexes by the next pass), and a segment
 * another writer replaced meanwhile (left alone), small segments merged, and what a merge killed
 * before it deleted the rest of its run leaves (noted by check, read right, deleted by the next pass).
 */
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { afterEach, describe, expect, it } from 'vitest'
import { checkPartition } from '../../src/backends/file/check.js'
import { compactPartition } from '../../src/backends/file/compaction.js'
import { FileBackend } from '../../src/backends/file/file-backend.js'
import { indexPath, partitionDir, segmentPath, timeIndexPath } from '../../src/backends/file/layout.js'
import { listSegmentsSync } from '../../src/backends/file/segment-list.js'
import { readAll, records, topicMeta } from '../contract/fixture.js'
import { tempDir } from '../helpers/tmp.js'
import { until } from '../helpers/wait.js'

const meta = topicMeta('c', { compact: true, tombstoneRetentionMs: 86_400_000 })
let cleanup: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const f of cleanup.reverse()) await f()
  cleanup = []
})

async function store(): Promise<{ b: FileBackend; dir: string; root: string }> {
  const t = tempDir('twainmq-compaction-')
  const b = new FileBackend(t.dir, { segmentBytes: 1024 })
  await b.init()
  cleanup.push(t.remove, () => b.close())
  await b.createTopic(meta)
  return { b, dir: partitionDir(t.dir, 'c', 0), root: t.dir }
}

/** `n` updates of keys 0..keys-1 in turn, one append each. */
async function churn(b: FileBackend, n: number, keys: number): Promise<void> {
  for (let i = 0; i < n; i++) await b.append('c', 0, records(meta, [{ key: i % keys, value: `v${i}` }]), 'p')
}

const rules = { tombstoneRetentionMs: 86_400_000, now: Date.now() }

describe('file compaction', () => {
  it('runs in the background after rolls: sealed segments lose older records without any call', async () => {
    const { b, dir } = await store()
    await churn(b, 400, 2)
    await until(async () => (await b.lastCompaction('c')) !== undefined, 10_000, 'a background pass')
    await until(async () => (await readAll(b, 'c')).length < 400 / 2, 10_000, 'sealed segments holding fewer records')
    expect(checkPartition(dir, 0, 'c', true).damage).toEqual([])
  })

  it('check counts the gaps of a compacted segment in one note and still finds a flipped byte', async () => {
    const { b, dir } = await store()
    await churn(b, 200, 3)
    await b.compact('c')
    const r = checkPartition(dir, 0, 'c', true)
    expect(r.damage).toEqual([])
    expect(r.notes.filter((n) => n.startsWith('gap:'))).toEqual([])
    expect(r.notes.some((n) => / gaps? of removed offsets \(a compacted topic/.test(n))).toBe(true)
    expect(checkPartition(dir, 0, 'c', false).notes.some((n) => n.startsWith('gap:'))).toBe(true)
    // Damage in a rewritten segment: the last sealed one holds the kept records.
    const bases = listSegmentsSync(dir, 'c')
    const sealed = bases.slice(0, -1).find((base) => readFileSync(segmentPath(dir, base)).length > 200) as number
    const bytes = readFileSync(segmentPath(dir, sealed))
    bytes[60] = (bytes[60] as number) ^ 0xff
    writeFileSync(segmentPath(dir, sealed), bytes)
    expect(checkPartition(dir, 0, 'c', true).damage.some((d) => /CRC/.test(d.reason))).toBe(true)
    await expect(compactPartition(dir, 'c', rules)).rejects.toThrow(/Compaction of .* stopped: a frame fails its CRC/)
  })

  it('a segment left without its indexes (a crash inside the renames) is read by a scan and indexed again by the next pass', async () => {
    const { b, dir } = await store()
    await churn(b, 200, 3)
    await b.compact('c')
    const before = await readAll(b, 'c')
    const base = listSegmentsSync(dir, 'c')[0] as number
    rmSync(indexPath(dir, base))
    rmSync(timeIndexPath(dir, base))
    expect(checkPartition(dir, 0, 'c', true).damage).toEqual([])
    expect(await readAll(b, 'c')).toEqual(before)
    const done = await compactPartition(dir, 'c', rules)
    expect(done.rewritten).toBeGreaterThanOrEqual(1)
    expect(existsSync(indexPath(dir, base))).toBe(true)
    expect(await readAll(b, 'c')).toEqual(before)
  })

  it('leaves alone a segment replaced since it was read, and removes temporary files of dead passes only', async () => {
    const { b, dir, root } = await store()
    await churn(b, 200, 3)
    // No background pass from here on (one due after the churn's rolls could rewrite the replaced
    // segment, or leave a temporary file of its own, while the pass below runs).
    await b.close()
    const dead = `${dir}/.${String(0).padStart(20, '0')}.seg.compact-999999999-abcdef`
    const live = `${dir}/.${String(0).padStart(20, '0')}.seg.compact-${process.pid}-abcdef`
    writeFileSync(dead, 'x')
    writeFileSync(live, 'x')
    const base = listSegmentsSync(dir, 'c')[0] as number
    const path = segmentPath(dir, base)
    // The pass reads and copies the first segment synchronously, then waits for the lock: replaced
    // by an identical file (another inode) in between, it is left as it is.
    const original = readFileSync(path)
    const pass = compactPartition(dir, 'c', rules)
    rmSync(path)
    writeFileSync(path, original)
    const done = await pass
    expect(readFileSync(path).equals(original)).toBe(true)
    expect(done.rewritten).toBeGreaterThanOrEqual(1) // the other sealed segments were
    expect(readdirSync(dir).filter((n) => n.includes('.compact-'))).toEqual([live.split('/').pop()])
    rmSync(live)
    const reader = new FileBackend(root, { segmentBytes: 1024 })
    await reader.init()
    cleanup.push(() => reader.close())
    const all = await readAll(reader, 'c')
    expect(new Set(all.map((m) => m.key))).toEqual(new Set([0, 1, 2]))
  })

  it('merges runs of small sealed segments into the first of each: fewer files, the same records', async () => {
    const { b, dir } = await store()
    await churn(b, 600, 3)
    // Background passes may already have merged some runs while the churn rolled segments (they
    // run after rolls, at most once a second): what the explicit pass leaves is what is checked.
    await b.compact('c')
    const after = listSegmentsSync(dir, 'c')
    // 600 records in 1,024-byte segments made 23 sealed ones (26 records each); compacted to a few
    // dozen bytes each, they merge in runs of at least 7 whatever the background passes did before.
    expect(after.length).toBeLessThanOrEqual(5)
    expect(after[0]).toBe(0) // the partition's first segment keeps its base: its start is unchanged
    expect((await readAll(b, 'c')).map((m) => [m.key, m.value])).toEqual([
      [0, 'v597'],
      [1, 'v598'],
      [2, 'v599'],
    ])
    expect(checkPartition(dir, 0, 'c', true).damage).toEqual([])
  })

  it('segments a merge left behind (killed before deleting them) are noted by check, read right, and deleted by the next pass', async () => {
    const { b, dir, root } = await store()
    await churn(b, 300, 3)
    await b.close() // no background pass from here on: the files are this test's
    await compactPartition(dir, 'c', rules) // no merging: sealed segments stay apart
    const before = listSegmentsSync(dir, 'c').slice(0, -1)
    const saved = new Map(before.map((base) => [base, readFileSync(segmentPath(dir, base))]))
    await compactPartition(dir, 'c', { ...rules, mergeBytes: 1024 })
    const merged = listSegmentsSync(dir, 'c')
    const gone = before.filter((x) => !merged.includes(x))
    expect(gone.length).toBeGreaterThan(0)
    // As if the merge had been killed right after its rename: the rest of its run still there.
    for (const base of gone) writeFileSync(segmentPath(dir, base), saved.get(base) as Buffer)
    const r = checkPartition(dir, 0, 'c', true)
    expect(r.damage.map((d) => d.reason)).toEqual([])
    expect(r.notes.some((n) => /left over from a compaction merge/.test(n))).toBe(true)
    const reader = new FileBackend(root, { segmentBytes: 1024 })
    await reader.init()
    cleanup.push(() => reader.close())
    const view = (ms: Awaited<ReturnType<typeof readAll>>) => ms.map((m) => [m.offset, m.key, m.value])
    const expected = [
      [297, 0, 'v297'],
      [298, 1, 'v298'],
      [299, 2, 'v299'],
    ]
    expect(view(await readAll(reader, 'c'))).toEqual(expected)
    // A reader seeking into a leftover reads its records (genuine, older), then what follows.
    expect(view(await readAll(reader, 'c', gone[0] as number)).slice(-3)).toEqual(expected)
    await compactPartition(dir, 'c', rules)
    expect(listSegmentsSync(dir, 'c').filter((x) => gone.includes(x))).toEqual([])
    expect(checkPartition(dir, 0, 'c', true).notes.some((n) => /left over/.test(n))).toBe(false)
    expect(view(await readAll(reader, 'c'))).toEqual(expected)
  })
})
