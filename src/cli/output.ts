import { once } from 'node:events'
import { watchStdoutReader } from './stdout-reader.js'

const HIGH_WATER = 64 * 1024

/** Told whether a line reached the output (`true`) or was dropped because the output broke. */
export type WrittenCallback = (ok: boolean) => void

/**
 * Writes lines to stdout in chunks: lines written in one turn of the event loop go out in one
 * `write()`, so a burst of messages is cheap and a lone tail message is printed at once. Waits for
 * `drain` when the pipe is full. A closed pipe (`EPIPE`, e.g. `| head`) marks the writer `broken`
 * instead of crashing, and so does a reader of stdout that goes away while nothing is written (see
 * `watchStdoutReader`): callers stop reading then, without waiting for another message. A line may carry a callback that learns whether
 * it was handed to the output (`tail --group` acks a message only then).
 */
export class LineWriter {
  private buf = ''
  private written: WrittenCallback[] = []
  private scheduled = false
  private draining: Promise<void> | undefined
  private onBroken: Array<() => void> = []
  broken = false

  private readonly unwatch: () => void

  constructor(private readonly out: NodeJS.WriteStream = process.stdout) {
    out.on('error', this.fail)
    this.unwatch =
      out === process.stdout
        ? watchStdoutReader(() => this.fail(Object.assign(new Error('stdout was closed'), { code: 'EPIPE' })))
        : () => undefined
  }

  private readonly fail = (err: NodeJS.ErrnoException): void => {
    if (this.broken) return
    if (err.code !== 'EPIPE' && err.code !== 'ERR_STREAM_DESTROYED')
      process.stderr.write(`ERR_OUTPUT: ${err.message}\n`)
    this.broken = true
    this.unwatch()
    this.buf = ''
    const dropped = this.written.splice(0)
    for (const f of this.onBroken.splice(0)) f()
    for (const f of dropped) f(false)
  }

  /** Call `f` once when the output breaks. */
  whenBroken(f: () => void): void {
    if (this.broken) f()
    else this.onBroken.push(f)
  }

  /**
   * Queue a line; resolves at once unless the output is full. `written`, if given, is called once:
   * with `true` when the chunk holding the line was handed to the output, `false` if it never will be.
   */
  async line(s: string, written?: WrittenCallback): Promise<void> {
    if (this.broken) return written?.(false)
    this.buf += s + '\n'
    if (written) this.written.push(written)
    if (this.buf.length >= HIGH_WATER) this.flush()
    else if (!this.scheduled) {
      this.scheduled = true
      setImmediate(() => this.flush())
    }
    if (this.draining) await this.draining
  }

  private flush(): void {
    this.scheduled = false
    if (this.buf === '' || this.broken) return
    const chunk = this.buf
    this.buf = ''
    const callbacks = this.written.splice(0)
    const onWritten =
      callbacks.length === 0
        ? undefined
        : (err?: Error | null) => {
            for (const f of callbacks) f(!err)
          }
    if (!this.out.write(chunk, onWritten) && !this.draining) {
      this.draining = new Promise<void>((resolve) => {
        const done = () => {
          this.draining = undefined
          resolve()
        }
        once(this.out, 'drain').then(done, done)
        this.whenBroken(done)
      })
    }
  }

  /** Write what is queued and wait until the output took it. */
  async end(): Promise<void> {
    this.unwatch()
    this.flush()
    if (this.draining) await this.draining
  }
}
