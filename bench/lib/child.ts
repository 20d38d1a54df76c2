import { spawn, type ChildProcess } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const benchDir = join(dirname(fileURLToPath(import.meta.url)), '..')
export const repoRoot = join(benchDir, '..')

/** Messages exchanged over the IPC channel between a tail benchmark and its producer child. */
export type ChildMessage = { type: 'ready' } | { type: 'done'; sent: number } | { type: 'error'; message: string }

export interface BenchChild {
  proc: ChildProcess
  /** Resolves with the next message of this type. */
  next<T extends ChildMessage['type']>(type: T): Promise<Extract<ChildMessage, { type: T }>>
  /** Tell the child to start. */
  go(): void
  exited: Promise<number | string>
  kill(): void
}

const live = new Set<ChildProcess>()
process.on('exit', () => {
  for (const c of live) c.kill('SIGKILL')
})

/** Start `bench/children/<script>` with `node --import tsx`, with an IPC channel. */
export function spawnBenchChild(script: string, args: string[]): BenchChild {
  const proc = spawn(process.execPath, ['--import', 'tsx', join(benchDir, 'children', script), ...args], {
    cwd: repoRoot,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  live.add(proc)
  const exited = new Promise<number | string>((resolve) =>
    proc.once('exit', (code, signal) => {
      live.delete(proc)
      resolve(code ?? signal ?? -1)
    }),
  )
  const next = <T extends ChildMessage['type']>(type: T) =>
    new Promise<Extract<ChildMessage, { type: T }>>((resolve, reject) => {
      const onMsg = (m: ChildMessage) => {
        if (m.type === 'error') {
          cleanup()
          reject(new Error(`child ${script} failed: ${m.message}`))
        } else if (m.type === type) {
          cleanup()
          resolve(m as Extract<ChildMessage, { type: T }>)
        }
      }
      const onExit = (code: number | null, signal: string | null) => {
        cleanup()
        reject(new Error(`child ${script} exited (${code ?? signal}) before sending "${type}"`))
      }
      const cleanup = () => {
        proc.off('message', onMsg)
        proc.off('exit', onExit)
      }
      proc.on('message', onMsg)
      proc.once('exit', onExit)
    })
  return {
    proc,
    next,
    go: () => void proc.send('go'),
    exited,
    kill: () => void proc.kill('SIGKILL'),
  }
}

/** Child side: report a message to the parent. */
export function tellParent(m: ChildMessage): void {
  process.send?.(m)
}

/** Child side: resolve when the parent says "go". */
export function waitForGo(): Promise<void> {
  return new Promise((resolve) => {
    const on = (m: unknown) => {
      if (m === 'go') {
        process.off('message', on)
        resolve()
      }
    }
    process.on('message', on)
  })
}
