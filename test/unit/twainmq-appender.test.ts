import { appendFileSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { TwainmqAppender, lockPath } from '../../src/compat/twainmq/appender.js'
import { ChunkDirectory } from '../../src/compat/twainmq/chunks.js'
import { LineIndex, LineIndexCache } from '../../src/compat/twainmq/line-index.js'
import { makeTmp, rmTmp } from './helpers.js'

const line = (s: string) => Buffer.from(s + '\n', 'latin1')

/** A line index cache whose next refresh is followed by an unlocked "Python" append to the file. */
class Interloper extends LineIndexCache {
  sneak: string | undefined
  override get(path: string): LineIndex {
    const idx = super.get(path)
    const refresh = idx.refresh.bind(idx)
    idx.refresh = (fd?: number) => {
      const r = refresh(fd)
      if (this.sneak !== undefined) {
        appendFileSync(path, this.sneak)
        this.sneak = undefined
      }
      return r
    }
    return idx
  }
}

describe('TwainMQ appender', () => {
  let root: string
  let dir: ChunkDirectory
  beforeEach(() => {
    root = makeTmp()
    mkdirSync(join(root, 't'))
    dir = new ChunkDirectory(join(root, 't'), 't')
  })
  afterEach(() => {
    vi.useRealTimers()
    rmTmp(root)
  })

  it('returns the true line index when an unlocked writer appends between our count and our write', async () => {
    const lines = new Interloper()
    const a = new TwainmqAppender(root, dir, lines, 0, 'never')
    try {
      expect(await a.append(line('ours-0'))).toBe(0)
      lines.sneak = 'python-1\npython-2\n'
      expect(await a.append(Buffer.concat([line('ours-3'), line('ours-4')]))).toBe(3)
      expect(await a.append(line('ours-5'))).toBe(5)
      const [file] = readdirSync(join(root, 't'))
      expect(readFileSync(join(root, 't', file!), 'latin1').split('\n')).toEqual([
        'ours-0',
        'python-1',
        'python-2',
        'ours-3',
        'ours-4',
        'ours-5',
        '',
      ])
    } finally {
      a.close()
    }
  })

  it('creates <P>-<UTC day>_<offset>.tmf at a day change, starting where the last chunk ends', async () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(Date.UTC(2024, 1, 28, 23, 59, 59))
    const a = new TwainmqAppender(root, dir, new LineIndexCache(), 2, 'batch')
    try {
      expect(await a.append(Buffer.concat([line('a'), line('b')]))).toBe(0)
      vi.setSystemTime(Date.UTC(2024, 1, 29, 0, 0, 1)) // a leap day, UTC
      expect(await a.append(line('c'))).toBe(2)
      vi.setSystemTime(Date.UTC(2024, 2, 3, 12))
      expect(await a.append(line('d'))).toBe(3)
      expect(readdirSync(join(root, 't')).sort()).toEqual(['2-20240228_0.tmf', '2-20240229_2.tmf', '2-20240303_3.tmf'])
      expect(readFileSync(join(root, 't', '2-20240229_2.tmf'), 'latin1')).toBe('c\n')
    } finally {
      a.close()
    }
  })

  it('keeps its lock beside the topic directory (never inside it, where Python looks for chunks) and releases it', async () => {
    const a = new TwainmqAppender(root, dir, new LineIndexCache(), 0, 'never')
    await a.append(line('x'))
    expect(lockPath(root, 't', 0)).toBe(join(root, 't@0.lock'))
    expect(readdirSync(join(root, 't')).every((n) => n.endsWith('.tmf'))).toBe(true)
    a.close()
    expect(existsSync(lockPath(root, 't', 0))).toBe(false)
  })

  it('serialises appends of one process and of two appenders (as of two processes) on the same partition', async () => {
    const a = new TwainmqAppender(root, dir, new LineIndexCache(), 0, 'never')
    const b = new TwainmqAppender(root, new ChunkDirectory(join(root, 't'), 't'), new LineIndexCache(), 0, 'never')
    try {
      const writes = Array.from({ length: 60 }, (_, i) =>
        (i % 2 ? a : b).append(Buffer.concat([line(`m${i}-0`), line(`m${i}-1`)])),
      )
      const bases = await Promise.all(writes)
      expect([...bases].sort((x, y) => x - y)).toEqual(bases.map((_, i) => i * 2))
      const [file] = readdirSync(join(root, 't'))
      const text = readFileSync(join(root, 't', file!), 'latin1').split('\n')
      bases.forEach((base, i) => {
        expect(text[base]).toBe(`m${i}-0`)
        expect(text[base + 1]).toBe(`m${i}-1`)
      })
    } finally {
      a.close()
      b.close()
    }
  })
})

describe('TwainMQ line index', () => {
  it('counts complete lines incrementally, remembers positions, and starts over for a replaced file', () => {
    const root = makeTmp()
    try {
      const path = join(root, 'f.tmf')
      appendFileSync(path, '')
      const idx = new LineIndex(path)
      expect(idx.refresh()).toMatchObject({ lines: 0, size: 0, partialTail: false })
      const text = Array.from({ length: 3000 }, (_, i) => `line-${i}`).join('\n')
      appendFileSync(path, text) // the last line has no \n yet
      expect(idx.refresh()).toMatchObject({ lines: 2999, partialTail: true })
      appendFileSync(path, '\n')
      expect(idx.refresh()).toMatchObject({ lines: 3000, partialTail: false })
      const fd = openSync(path, 'r')
      for (const k of [0, 1, 1023, 1024, 1025, 2048, 2999, 3000]) {
        const pos = idx.positionOf(k, fd)
        const expected =
          k === 3000
            ? Buffer.byteLength(text) + 1
            : Buffer.byteLength(text.split('\n').slice(0, k).join('\n')) + (k ? 1 : 0)
        expect(pos, `line ${k}`).toBe(expected)
      }
      closeSync(fd)
      rmSync(path)
      appendFileSync(path, 'a\nb\n')
      expect(idx.refresh()).toMatchObject({ lines: 2, size: 4 })
    } finally {
      rmTmp(root)
    }
  })
})
