// A file reader holding a segment that a compaction merge replaced: at the old file's seal, whose
// successor the merge deleted, it finds its offset in the merged segment and reads on, instead of
// answering `[]` while records remain (a history would end short, a table's ready() come early).
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { backendOf } from '../../src/facade/twain.js'
import { open, type Twain } from '../../src/index.js'
import { tempDir } from '../helpers/tmp.js'

const opened: Twain[] = []
const dirs: Array<() => void> = []
afterEach(async () => {
  await Promise.all(opened.splice(0).map((t) => t.close()))
  for (const rm of dirs.splice(0)) rm()
})

describe('file reader across a compaction merge', () => {
  it('reads on from the merged segment when the old file’s successor is gone', async () => {
    const d = tempDir('twainmq-merge-reader-')
    dirs.push(d.remove)
    const t = await open(d.dir, { segmentBytes: 1024 })
    opened.push(t)
    await t.createTopic('c', { keyType: 'string', compact: true })
    const p = t.producer<string, string>('c')
    for (let i = 0; i < 30; i++) await p.send('a', `${'x'.repeat(200)}${i}`)
    await p.send('b', 'last')
    const segments = () =>
      readdirSync(join(d.dir, 'c', '0'))
        .filter((n) => n.endsWith('.seg'))
        .map((n) => Number(n.slice(0, 20)))
    const before = segments()
    expect(before.length).toBeGreaterThan(2)
    const reader = await backendOf(t).openReader('c', 0, 0)
    // Exactly the first segment's records: the reader stands before its seal.
    expect(await reader.read(before[1] as number)).toHaveLength(before[1] as number)
    const other = await open(d.dir, { segmentBytes: 1024 })
    opened.push(other)
    await other.compactTopic('c')
    expect(segments().length).toBeLessThan(before.length)
    const next = await reader.read(100)
    expect(next.map((m) => `${String(m.key)}@${m.offset}`)).toEqual(['a@29', 'b@30'])
    await reader.close()
  })
})
