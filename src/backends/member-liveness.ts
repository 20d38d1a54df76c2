import { processState, selfIdentity, type ProcessIdentity } from './liveness.js'

/**
 * The process fields of a stored group member (the file backend's `state.json`, the Redis member
 * hash): `pid` and `host`, and the rest of its {@link ProcessIdentity} where the member recorded it
 * (older twainmq versions did not). All optional: a record is JSON any version may have written.
 */
export interface MemberProcess {
  pid?: number | undefined
  host?: string | undefined
  boot?: string | undefined
  ns?: string | undefined
  start?: string | undefined
}

/**
 * What to store about the process of a member that runs as process `pid` on `host`: this process's
 * whole identity when that is this process (every consumer's member is: it heartbeats itself), else
 * the pid and host alone, which {@link memberGone} judges as an older twainmq's record.
 */
export function memberProcess(pid: number, host: string): MemberProcess & { pid: number; host: string } {
  const me = selfIdentity()
  return pid === me.pid && host === me.host ? { ...me } : { pid, host }
}

/**
 * Whether a member's process is certainly gone, so the member is dead now, before its session
 * times out (its partitions are reassigned, its shared name may be registered again). A member
 * whose process this process cannot judge (another host or pid namespace) is left to its session.
 *
 * The one rule for both backends and both group modes, and the partition locks' own check
 * ({@link processState}): a pid that now belongs to a process started at another time (pid reuse),
 * or a record from before a reboot, is a dead member.
 */
export function memberGone(m: MemberProcess): boolean {
  const id = recordedIdentity(m)
  return id !== undefined && processState(id) === 'dead'
}

/**
 * The identity a member record names (undefined for a record without a pid and host: left to its
 * session). A record with only pid and host was written by an older twainmq: it is read as the locks
 * read an old lock, in this boot and pid namespace with its start time unknown, which keeps that
 * version's rule (dead when on this host and its pid is gone; a reused pid keeps such a member until
 * its session times out).
 */
function recordedIdentity({ pid, host, boot, ns, start }: MemberProcess): ProcessIdentity | undefined {
  if (typeof pid !== 'number' || typeof host !== 'string') return undefined
  if (typeof boot === 'string' && typeof ns === 'string' && typeof start === 'string')
    return { host, boot, ns, pid, start }
  const me = selfIdentity()
  return { host, boot: me.boot, ns: me.ns, pid, start: '?' }
}
