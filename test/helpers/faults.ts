// Small shared pieces of the fault tests.
import type { ChildProcess } from 'node:child_process'

/** Thrown by `within` when a phase does not settle in time. */
export class PhaseTimeout extends Error {
  constructor(what: string, ms: number) {
    super(`${what} did not settle within ${ms} ms`)
    this.name = 'PhaseTimeout'
  }
}

/** Settle `p` within `ms`, else reject with `PhaseTimeout` (the original promise is left to settle, quietly). */
export function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  p.catch(() => undefined)
  let timer: NodeJS.Timeout | undefined
  const t = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new PhaseTimeout(what, ms)), ms)
  })
  return Promise.race([p, t]).finally(() => clearTimeout(timer))
}

/** One line describing an error: name, code, retriable, cause code, message. */
export function describeErr(e: unknown): string {
  if (!(e instanceof Error)) return `non-Error ${JSON.stringify(e)}`
  const x = e as Error & { code?: unknown; retriable?: unknown; cause?: { code?: unknown } }
  return `${x.name} code=${String(x.code)} retriable=${String(x.retriable)} cause.code=${String(x.cause?.code)}: ${x.message}`
}

/** Undefined when `e` is the specified disk-full error, else why not. */
export function notDiskFull(e: unknown): string | undefined {
  const x = e as { name?: unknown; code?: unknown; retriable?: unknown; cause?: { code?: unknown } } | undefined
  if (
    x &&
    x.name === 'BackendError' &&
    x.code === 'ERR_DISK_FULL' &&
    x.retriable === true &&
    x.cause?.code === 'ENOSPC'
  )
    return undefined
  return `expected BackendError code=ERR_DISK_FULL retriable=true cause.code=ENOSPC, got ${describeErr(e)}`
}

/** Collect unhandled rejections of this test process (vitest also reports them). */
export function trackUnhandled(): { list: string[]; stop: () => void } {
  const list: string[] = []
  const on = (reason: unknown) => list.push(describeErr(reason))
  process.on('unhandledRejection', on)
  return { list, stop: () => process.off('unhandledRejection', on) }
}

/** Acknowledged `<id> <partition> <offset>` lines of a fault child (comments `#` and rejections `!` skipped). */
export function parseAcked(lines: readonly string[]): Array<{ id: string; partition: number; offset: number }> {
  const out: Array<{ id: string; partition: number; offset: number }> = []
  for (const l of lines) {
    const m = /^([^\s#!]\S*) (\d+) (\d+)$/.exec(l)
    if (m) out.push({ id: m[1]!, partition: Number(m[2]), offset: Number(m[3]) })
  }
  return out
}

/** Rejection lines `! <id> <code> …` of a fault-producer child. */
export function parseRejected(lines: readonly string[]): Array<{ id: string; code: string; line: string }> {
  const out: Array<{ id: string; code: string; line: string }> = []
  for (const l of lines) {
    const m = /^! (\S+) (\S+)/.exec(l)
    if (m) out.push({ id: m[1]!, code: m[2]!, line: l })
  }
  return out
}

/**
 * A promise for a child's 'close' (it exited AND its stdout/stderr were read to the end; 'exit' can
 * come before the last output lines). Call right after spawning. Resolves with the exit code or signal.
 */
export function closedPromise(child: ChildProcess): Promise<number | string> {
  return new Promise((resolve) => child.once('close', (code, signal) => resolve(code ?? signal ?? -1)))
}
