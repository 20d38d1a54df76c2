/**
 * Small helpers shared by the unit and property tests (not a test file itself).
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { readFrameHeader } from '../../src/backends/file/batch-format.js'

/** A fresh temporary directory under the OS temp dir. */
export function makeTmp(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'twainmq-'))
}

/** Remove a temporary directory made by `makeTmp`. */
export function rmTmp(dir: string | undefined): void {
  if (dir) fs.rmSync(dir, { recursive: true, force: true })
}

/** Everything a finite async iterable yields. */
export async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = []
  for await (const v of it) out.push(v)
  return out
}

/**
 * The first `n` items of an (infinite) async iterable, then `return()`. Rejects when they do not
 * arrive within `timeoutMs`.
 */
export async function takeN<T>(it: AsyncIterable<T>, n: number, timeoutMs = 5000): Promise<T[]> {
  const iter = it[Symbol.asyncIterator]()
  const out: T[] = []
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`takeN: only ${out.length} of ${n} items within ${timeoutMs} ms`)),
      timeoutMs,
    )
  })
  try {
    while (out.length < n) {
      const r = await Promise.race([iter.next(), timeout])
      if (r.done) break
      out.push(r.value)
    }
  } finally {
    clearTimeout(timer)
    await iter.return?.()
  }
  return out
}

/** Counts of active resources by type (`process.getActiveResourcesInfo()`). */
export function resourceCounts(): Record<string, number> {
  const out: Record<string, number> = {}
  for (const r of process.getActiveResourcesInfo()) out[r] = (out[r] ?? 0) + 1
  return out
}

/** How many watcher / timer resources are active (the kinds a tail creates). */
export function watcherAndTimerCount(): { watchers: number; timers: number } {
  const c = resourceCounts()
  return { watchers: (c.FSEventWrap ?? 0) + (c.StatWatcher ?? 0), timers: c.Timeout ?? 0 }
}

/** Segment files of one partition directory. */
export function segmentFiles(root: string, topic: string, partition: number): string[] {
  return fs
    .readdirSync(path.join(root, topic, String(partition)))
    .filter((n) => n.endsWith('.seg'))
    .sort()
}

/** Record counts of the frames in partition `p`'s first segment. */
export function frameCounts(root: string, topic: string, p: number): number[] {
  const buf = fs.readFileSync(path.join(root, topic, String(p), segmentFiles(root, topic, p)[0]!))
  const counts: number[] = []
  for (let pos = 0; pos < buf.length;) {
    const h = readFrameHeader(buf, pos, buf.length)
    if (h === undefined || h === 'short' || h === 'bad') throw new Error(`bad frame at ${pos}`)
    counts.push(h.count)
    pos += h.length
  }
  return counts
}
