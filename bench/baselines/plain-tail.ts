/*
 * The plain-Node tail baseline: raw `fs.watch` on a file another process appends lines to, and
 * `fs.read` of the bytes appended since the last read. Each line is a wall-clock timestamp
 * (`performance.timeOrigin + performance.now()` in the writer); the notice latency is the reader's
 * wall clock minus that.
 */
import { close, open, read, watch } from 'node:fs'
import { promisify } from 'node:util'
import { machineNow } from '../lib/stats.js'

const openAsync = promisify(open)
const closeAsync = promisify(close)

export interface PlainTail {
  /** Resolves when `count` lines were seen. */
  done: Promise<void>
  latencies: number[]
  stop(): Promise<void>
}

export async function plainTail(path: string, count: number): Promise<PlainTail> {
  const fd = await openAsync(path, 'r')
  const buf = Buffer.allocUnsafe(64 * 1024)
  const latencies: number[] = []
  let pos = 0
  let partial = ''
  let reading = false
  let again = false
  let finished = false
  let resolveDone!: () => void
  let rejectDone!: (e: unknown) => void
  const done = new Promise<void>((res, rej) => {
    resolveDone = res
    rejectDone = rej
  })

  const drain = () => {
    if (finished) return
    if (reading) {
      again = true
      return
    }
    reading = true
    again = false
    read(fd, buf, 0, buf.length, pos, (err, n) => {
      reading = false
      if (err) return rejectDone(err)
      if (n > 0) {
        const now = machineNow()
        pos += n
        const text = partial + buf.toString('utf8', 0, n)
        const lines = text.split('\n')
        partial = lines.pop() ?? ''
        for (const l of lines) if (l) latencies.push(now - Number(l))
        if (latencies.length >= count) {
          finished = true
          return resolveDone()
        }
        return drain() // there may be more
      }
      if (again) drain()
    })
  }

  const watcher = watch(path, { persistent: true }, () => drain())
  watcher.on('error', rejectDone)
  drain()
  return {
    done,
    latencies,
    stop: async () => {
      finished = true
      watcher.close()
      while (reading) await new Promise((r) => setImmediate(r))
      await closeAsync(fd)
    },
  }
}
