/**
 * The floor of `Promise.all(send)` on the plain log's format: the least any producer whose `send`
 * returns a promise per message (DESIGN §3.4) can do, measured against the plain-Node framed log
 * (bench/baselines/plain-log.ts) that issue 15's row "file Promise.all(send) ≥ 0.75× the plain log"
 * compares with.
 *
 * `FloorProducer.send(key, value)` keeps the record and returns a promise (one shared executor: no
 * closure per send); one microtask encodes every record kept since into 64 KiB buffers exactly as
 * `plainWrite` does (no CRC, no offsets in the file, no lock, no headers), writes them with
 * `fs.writeSync` and resolves each promise with `{ partition: 0, offset }`. The caller is the peers
 * suite's: windows of 1,000 sends awaited with `Promise.all`.
 */
import { closeSync, openSync, writeSync } from 'node:fs'
import { CHUNK } from '../baselines/plain-log.js'

/** What a send resolves with. */
export interface Sent {
  partition: number
  offset: number
}

/** Sends awaited together, as the peers suite's `Promise.all(1000 × send)` phase does. */
export const WINDOW = 1000

export class FloorProducer {
  private readonly fd: number
  private readonly buf = Buffer.allocUnsafe(CHUNK)
  private readonly keys: number[] = []
  private readonly values: string[] = []
  private readonly resolvers: Array<(s: Sent) => void> = []
  private scheduled = false
  private offset = 0
  private readonly flushNow = (): void => this.flush()
  /** One executor for every promise. */
  private readonly keep = (resolve: (s: Sent) => void): void => void this.resolvers.push(resolve)

  constructor(path: string) {
    this.fd = openSync(path, 'w')
  }

  send(key: number, value: string): Promise<Sent> {
    this.keys.push(key)
    this.values.push(value)
    if (!this.scheduled) {
      this.scheduled = true
      queueMicrotask(this.flushNow)
    }
    return new Promise<Sent>(this.keep)
  }

  private flush(): void {
    this.scheduled = false
    const { buf, keys, values } = this
    const count = keys.length
    let pos = 0
    for (let i = 0; i < count; i++) {
      const v = values[i] as string
      if (pos + 14 + v.length * 3 > buf.length) {
        writeSync(this.fd, buf, 0, pos)
        pos = 0
      }
      const start = pos
      pos += 4
      buf.writeUInt16LE(keys[i] as number, pos)
      pos += 2
      buf.writeDoubleLE(Date.now(), pos)
      pos += 8
      pos += buf.write(v, pos, 'utf8')
      buf.writeUInt32LE(pos - start - 4, start)
    }
    if (pos > 0) writeSync(this.fd, buf, 0, pos)
    const resolvers = this.resolvers.splice(0)
    keys.length = 0
    values.length = 0
    for (let i = 0; i < count; i++) (resolvers[i] as (s: Sent) => void)({ partition: 0, offset: this.offset++ })
  }

  close(): void {
    closeSync(this.fd)
  }
}

/** `n` sends with keys `i % 65536`, in windows of `WINDOW` awaited with `Promise.all`: msgs/s. */
export async function sendWindows(
  n: number,
  value: string,
  send: (key: number, value: string) => Promise<unknown>,
): Promise<number> {
  const sends = new Array<Promise<unknown>>(WINDOW)
  const t0 = performance.now()
  for (let i = 0; i < n; i += WINDOW) {
    const m = Math.min(WINDOW, n - i)
    sends.length = m
    for (let j = 0; j < m; j++) sends[j] = send((i + j) % 65536, value)
    await Promise.all(sends)
  }
  return n / ((performance.now() - t0) / 1000)
}
