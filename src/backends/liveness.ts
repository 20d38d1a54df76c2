import { readFileSync, readlinkSync } from 'node:fs'
import { hostname } from 'node:os'

/**
 * Who a process is, precisely enough to tell later whether it still runs: a pid alone is not (pids
 * are reused, and mean nothing in another pid namespace or after a reboot).
 */
export interface ProcessIdentity {
  host: string
  /** Linux boot id (`/proc/sys/kernel/random/boot_id`), '-' where unknown. */
  boot: string
  /** Pid namespace (`/proc/self/ns/pid` link), '-' where unknown. */
  ns: string
  pid: number
  /**
   * Start time of the process in clock ticks since boot (`/proc/<pid>/stat` field 22), '-' where
   * this system has none, '?' where it was not recorded (a lock of an older twainmq).
   */
  start: string
}

export const HOST = hostname()

function readTrim(path: string): string {
  try {
    return readFileSync(path, 'utf8').trim() || '-'
  } catch {
    return '-'
  }
}

/** Start time of `pid` from `/proc/<pid>/stat`, '-' when it cannot be read (no /proc, or gone). */
function startTime(pid: number): string {
  const stat = readTrim(`/proc/${pid}/stat`)
  // The command name (field 2) is in parentheses and may contain spaces: count from the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return fields[19] ?? '-'
}

let self: ProcessIdentity | undefined

/** This process's identity (computed once). */
export function selfIdentity(): ProcessIdentity {
  if (!self) {
    let ns = '-'
    try {
      ns = readlinkSync('/proc/self/ns/pid')
    } catch {
      /* not Linux */
    }
    self = {
      host: HOST,
      boot: readTrim('/proc/sys/kernel/random/boot_id'),
      ns,
      pid: process.pid,
      start: startTime(process.pid),
    }
  }
  return self
}

/** Whether a process with this pid exists (on this host, in this pid namespace). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/**
 * Whether the process `id` still runs: `'dead'` when it certainly does not (its pid is gone, or was
 * reused by a process started at another time, or the machine rebooted since), `'alive'` when it
 * certainly does (stopped processes included: a paused process is alive), `'unknown'` when this
 * process cannot see it (another host or pid namespace).
 */
export function processState(id: ProcessIdentity): 'alive' | 'dead' | 'unknown' {
  const me = selfIdentity()
  if (id.host !== me.host) return 'unknown'
  if (id.boot !== '-' && me.boot !== '-' && id.boot !== me.boot) return 'dead'
  if (id.ns !== me.ns) return 'unknown'
  if (!pidAlive(id.pid)) return 'dead'
  if (id.start === '?') return 'unknown' // a pid recorded without its start time: may be reused
  if (id.start !== '-') {
    const now = startTime(id.pid)
    if (now !== '-' && now !== id.start) return 'dead'
  }
  return 'alive'
}
