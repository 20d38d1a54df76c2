import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { dirname, join } from 'node:path'

export { until } from './wait.js'

const here = dirname(fileURLToPath(import.meta.url))
export const repoRoot = join(here, '..', '..')

/** Start a TypeScript child script from test/helpers/children with tsx (`nodeArgs`: flags for node, e.g. `--expose-gc`). */
export function spawnChild(script: string, args: string[], nodeArgs: string[] = []): ChildProcess {
  return spawn(process.execPath, [...nodeArgs, '--import', 'tsx', join(here, 'children', script), ...args], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
}

/** Collect a child's stdout lines as they arrive. */
export function lines(child: ChildProcess): { lines: string[]; stderr: () => string } {
  const out: string[] = []
  let partial = ''
  let err = ''
  child.stdout?.setEncoding('utf8').on('data', (d: string) => {
    partial += d
    const parts = partial.split('\n')
    partial = parts.pop() ?? ''
    out.push(...parts.filter((l) => l.length > 0))
  })
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (err += d))
  return { lines: out, stderr: () => err }
}

/** Wait for a child to exit; resolves with its exit code (or signal name). */
export function exited(child: ChildProcess): Promise<number | string> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode)
  if (child.signalCode !== null) return Promise.resolve(child.signalCode)
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)))
}

/** Kill (by PID) every child still running, resuming stopped ones first, and wait for them to exit. Empties the list. */
export async function killChildren(children: ChildProcess[]): Promise<void> {
  for (const c of children.splice(0)) {
    if (c.exitCode !== null || c.signalCode !== null) continue
    c.kill('SIGCONT')
    c.kill('SIGKILL')
    await exited(c)
  }
}
