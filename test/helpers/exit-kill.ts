/** Servers the tests started (redis-server, prometheus): killed by PID if the test process exits first. */
import type { ChildProcess } from 'node:child_process'

const live = new Set<ChildProcess>()
process.once('exit', () => {
  for (const c of live) {
    try {
      if (c.pid !== undefined) process.kill(c.pid, 'SIGKILL')
    } catch {
      /* gone */
    }
  }
})

/** SIGKILL `child` by its PID when this process exits before it does. */
export function killOnExit(child: ChildProcess): void {
  live.add(child)
  child.once('exit', () => live.delete(child))
}

/**
 * Stop `child` by its PID: SIGTERM (and SIGCONT, so a paused process acts on it), SIGKILL if it
 * has not exited after `graceMs`; resolves once it has exited. Nothing when it is not running.
 */
export async function terminate(child: ChildProcess, graceMs = 5000): Promise<void> {
  const pid = child.pid
  if (pid === undefined || child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  process.kill(pid, 'SIGTERM')
  process.kill(pid, 'SIGCONT')
  const timer = setTimeout(() => {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      /* gone */
    }
  }, graceMs)
  await exited
  clearTimeout(timer)
}
