import { describe, expect, it } from 'vitest'
import {
  appendFileSync,
  closeSync,
  openSync,
  readFileSync,
  readdirSync,
  statSync,
  truncateSync,
  writeSync,
} from 'node:fs'
import { join } from 'node:path'
import { spawnSync } from 'node:child_process'
import { open, type Message } from '../../../src/index.js'
import { exited, lines, spawnChild, until } from '../../helpers/spawn.js'
import { useFileStore } from '../../helpers/file-store.js'
import { PROMPT_MS } from '../../helpers/wait.js'

const store = useFileStore()

async function readAll(topic: string): Promise<Message<string>[]> {
  const out: Message<string>[] = []
  for await (const m of store.twain.history<string>(topic)) out.push(m)
  return out
}

function activeSegment(topic: string, partition = 0): string {
  const dir = join(store.dir, topic, String(partition))
  const segs = readdirSync(dir)
    .filter((n) => n.endsWith('.seg'))
    .sort()
  return join(dir, segs[segs.length - 1]!)
}

describe('file backend across processes', () => {
  it('gives 4 concurrent producer processes exact, dense, unique offsets', async () => {
    await store.twain.createTopic('shared', { keyType: 'u8' })
    const children = [1, 2, 3, 4].map((id) => spawnChild('produce.ts', [store.dir, 'shared', String(id), '2000', '25']))
    const outs = children.map((c) => lines(c))
    const codes = await Promise.all(children.map((c) => exited(c)))
    expect(codes, outs.map((o) => o.stderr()).join('\n')).toEqual([0, 0, 0, 0])

    const all = await readAll('shared')
    expect(all).toHaveLength(8000)
    expect(all.map((m) => m.offset)).toEqual(Array.from({ length: 8000 }, (_, i) => i))
    // What each process was told matches what is stored, and each process's sends keep their order.
    const byOffset = new Map(all.map((m) => [m.offset, m.value]))
    for (const o of outs) {
      const acked = o.lines.flatMap((l) => JSON.parse(l) as Array<[number, number, string]>)
      expect(acked).toHaveLength(2000)
      for (const [, offset, value] of acked) expect(byOffset.get(offset)).toBe(value)
      const offsets = acked.map(([, offset]) => offset)
      expect([...offsets].sort((a, b) => a - b)).toEqual(offsets)
    }
    expect(new Set(all.map((m) => m.value)).size).toBe(8000)
  }, 60_000)

  it('loses nothing acknowledged when a producer is SIGKILLed mid-batch, and the next writer continues densely', async () => {
    await store.twain.createTopic('crash', { keyType: 'u8' })
    // At most 400,000 messages: a child writing at full speed while a loaded parent's check waits
    // once wrote millions, which the reads below held in memory (the worker ran out of heap).
    const child = spawnChild('produce.ts', [store.dir, 'crash', '7', '400000', '2000'])
    const out = lines(child)
    await until(() => out.lines.length >= 15, 30_000, 'acknowledged batches')
    child.kill('SIGKILL')
    await exited(child)
    const acked = out.lines.flatMap((l) => {
      try {
        return JSON.parse(l) as Array<[number, number, string]>
      } catch {
        return [] // a line cut by the kill was never fully acknowledged
      }
    })
    const before = await readAll('crash')
    expect(before.map((m) => m.offset)).toEqual(before.map((_, i) => i))
    const stored = new Map(before.map((m) => [m.offset, m.value]))
    for (const [, offset, value] of acked) expect(stored.get(offset)).toBe(value)

    const r = await store.twain.producer<string>('crash').send(1, 'after the crash')
    expect(r.offset).toBe(before.length)
    const after = await readAll('crash')
    expect(after.map((m) => m.offset)).toEqual(after.map((_, i) => i))
    expect(after[after.length - 1]!.value).toBe('after the crash')
  }, 60_000)

  it('ignores a torn final frame when reading, and the next writer truncates it', async () => {
    await store.twain.createTopic('torn')
    const p = store.twain.producer<string>('torn')
    await p.sendBatch(Array.from({ length: 10 }, (_, i) => ({ key: i, value: `v${i}` })))
    const seg = activeSegment('torn')
    const goodSize = statSync(seg).size
    // Append the first 30 bytes of a copy of the whole segment: a frame header with no body.
    const fd = openSync(seg, 'r+')
    const head = Buffer.alloc(30)
    const { readSync } = await import('node:fs')
    readSync(fd, head, 0, 30, 0)
    writeSync(fd, head, 0, 30, goodSize)
    closeSync(fd)

    expect((await readAll('torn')).map((m) => m.value)).toEqual(Array.from({ length: 10 }, (_, i) => `v${i}`))
    const other = await open(store.dir)
    try {
      const r = await other.producer<string>('torn').send(3, 'repaired')
      expect(r.offset).toBe(10)
    } finally {
      await other.close()
    }
    const all = await readAll('torn')
    expect(all.map((m) => [m.offset, m.value])).toEqual([
      ...Array.from({ length: 10 }, (_, i) => [i, `v${i}`]),
      [10, 'repaired'],
    ])
  })

  it('survives a torn frame left by a writer that died mid-write: the next writer cuts it and goes on', async () => {
    await store.twain.createTopic('cut')
    const p = store.twain.producer<string>('cut')
    await p.sendBatch([{ key: 1, value: 'a' }])
    await p.sendBatch([
      { key: 1, value: 'b' },
      { key: 1, value: 'c' },
    ])
    const seg = activeSegment('cut')
    // What a writer killed half-way through its write() leaves: the first bytes of a frame.
    const frame = readFileSync(seg).subarray(0, statSync(seg).size)
    appendFileSync(seg, frame.subarray(0, 70))
    expect((await readAll('cut')).map((m) => m.value)).toEqual(['a', 'b', 'c'])
    const r = await p.send(1, 'd')
    expect(r.offset).toBe(3)
    expect((await readAll('cut')).map((m) => [m.offset, m.value])).toEqual([
      [0, 'a'],
      [1, 'b'],
      [2, 'c'],
      [3, 'd'],
    ])
  })

  it('refuses to write after acknowledged bytes were cut from the segment by another program (never reuses their offsets)', async () => {
    await store.twain.createTopic('shrunk')
    const p = store.twain.producer<string>('shrunk')
    await p.sendBatch([{ key: 1, value: 'a' }])
    await p.sendBatch([
      { key: 1, value: 'b' },
      { key: 1, value: 'c' },
    ])
    const seg = activeSegment('shrunk')
    truncateSync(seg, statSync(seg).size - 3)
    await expect(p.send(1, 'd')).rejects.toMatchObject({ code: 'ERR_TOPIC_CORRUPT', file: seg })
  })

  it('breaks a lock left by a dead process at once', async () => {
    await store.twain.createTopic('locked')
    const dead = spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], { encoding: 'utf8' })
    const pid = Number(dead.stdout.trim())
    const lock = join(store.dir, 'locked', '0.lock')
    const fd = openSync(lock, 'wx')
    writeSync(fd, `${pid} deadbeef ${Date.now()}`)
    closeSync(fd)
    const started = Date.now()
    const r = await store.twain.producer<string>('locked').send(1, 'through')
    expect(r.offset).toBe(0)
    expect(Date.now() - started).toBeLessThan(PROMPT_MS)
  })

  it('delivers messages produced by another process to a tail, in order', async () => {
    await store.twain.createTopic('live', { keyType: 'u8' })
    const got: string[] = []
    const reading = (async () => {
      for await (const m of store.twain.tail<string>('live')) {
        got.push(m.value)
        if (got.length === 300) break
      }
    })()
    const child = spawnChild('produce.ts', [store.dir, 'live', '5', '300', '1'])
    const out = lines(child)
    expect(await exited(child), out.stderr()).toBe(0)
    await reading
    expect(got).toEqual(Array.from({ length: 300 }, (_, i) => `5:${i}`))
  }, 30_000)
})

describe('teardown', () => {
  for (const mode of ['break', 'abort', 'unsubscribe', 'close-while-waiting']) {
    it(`a process whose tail ends by ${mode} exits by itself after store.twain.close()`, async () => {
      const child = spawnChild('tail-exit.ts', [store.dir, mode])
      const out = lines(child)
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
      const code = await exited(child)
      clearTimeout(timer)
      expect(code, out.stderr()).toBe(0)
      expect(out.lines[out.lines.length - 1]).toBe('closed')
      if (mode === 'abort') expect(out.lines).toContain('aborted')
      if (mode === 'close-while-waiting') expect(out.lines).toContain('ended')
      if (mode === 'break' || mode === 'unsubscribe') expect(out.lines[0]).toMatch(/^got /)
    }, 20_000)
  }
})
