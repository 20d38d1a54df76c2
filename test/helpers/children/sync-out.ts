// Output for fault-test children: blocking writes straight to fd 1, so a line is in the pipe before
// the call returns (process.stdout queues writes in user space when the pipe is full, and a SIGKILL
// then loses lines the child believed written). Each write is < PIPE_BUF bytes: atomic, never cut.
import { writeSync } from 'node:fs'

const PIPE_BUF = 4096
const wait = new Int32Array(new SharedArrayBuffer(4))

function writeAll(text: string): void {
  const buf = Buffer.from(text)
  let off = 0
  while (off < buf.length) {
    try {
      off += writeSync(1, buf, off, buf.length - off)
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') throw e
      Atomics.wait(wait, 0, 0, 1) // fd 1 was made non-blocking by someone: wait for the reader
    }
  }
}

let chunk = ''
/** Queue a line; lines go out in chunks below PIPE_BUF (call `flushLines` to write now). */
export function line(text: string): void {
  if (chunk.length + text.length + 1 >= PIPE_BUF - 96) flushLines()
  chunk += text + '\n'
}

/** Write queued lines now. */
export function flushLines(): void {
  if (chunk) writeAll(chunk)
  chunk = ''
}

/** Write one line now. */
export function lineNow(text: string): void {
  line(text)
  flushLines()
}
