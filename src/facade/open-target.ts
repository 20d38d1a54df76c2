import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { InvalidArgumentError } from '../core/errors.js'

/** What an `open()` target names. */
export type Target = { kind: 'file'; root: string } | { kind: 'redis'; url: string; cluster: boolean }

/**
 * Parse an `open()` target: a path or `file:` URL (file backend), `redis://`/`rediss://` (Redis),
 * `redis+cluster://` (Redis Cluster); none → `$TWAINMQ_URL`, else `./.twainmq`.
 */
export function parseTarget(target: string | undefined): Target {
  // An empty TWAINMQ_URL (`TWAINMQ_URL= cmd`) means unset, as for most variables.
  const t = target ?? (process.env.TWAINMQ_URL || undefined) ?? './.twainmq'
  if (typeof t !== 'string' || t.trim() === '') {
    throw new InvalidArgumentError(`open() target must be a path or URL, got ${JSON.stringify(target)}`)
  }
  if (/^rediss?:\/\//i.test(t)) return { kind: 'redis', url: checkRedisUrl(t), cluster: false }
  if (/^redis\+cluster:\/\//i.test(t)) return { kind: 'redis', url: t, cluster: true }
  if (/^(rediss?|redis\+cluster):/i.test(t)) {
    throw new InvalidArgumentError(
      `open() target ${JSON.stringify(t)} is not a Redis URL: write redis://host:port (two slashes)`,
    )
  }
  // `file:./data` or `file:data`: a relative path (a URL would make it /data at the root).
  if (/^file:(?!\/)/i.test(t)) return { kind: 'file', root: resolve(decodeURIComponent(t.slice(5))) }
  if (/^file:/i.test(t)) {
    try {
      return { kind: 'file', root: fileURLToPath(t) }
    } catch (cause) {
      throw new InvalidArgumentError(`open() target ${JSON.stringify(t)} is not a valid file: URL`, { cause })
    }
  }
  // A scheme (two letters or more: `C:` is a drive) of any other kind, `mailto:x` as much as `ftp://x`.
  if (/^[a-z][a-z0-9+.-]+:/i.test(t)) {
    const dir = t.includes('//') ? '' : ` (a directory whose name has a colon: ./${t})`
    throw new InvalidArgumentError(
      `open() target ${JSON.stringify(t)} has an unsupported scheme: use a path, file:, redis://, rediss:// or redis+cluster://${dir}`,
    )
  }
  return { kind: 'file', root: resolve(t) }
}

/** A single-server Redis URL whose port and database are well-formed (else `InvalidArgumentError` naming them). */
function checkRedisUrl(t: string): string {
  let u: URL
  try {
    u = new URL(t)
  } catch (cause) {
    throw new InvalidArgumentError(
      `open() target ${JSON.stringify(t)} is not a valid Redis URL (check the host and the port 1-65535)`,
      { cause },
    )
  }
  if (u.port !== '' && (!/^\d+$/.test(u.port) || Number(u.port) < 1))
    throw new InvalidArgumentError(`open() target ${JSON.stringify(t)}: port ${u.port} is not 1-65535`)
  const db = u.pathname.replace(/^\//, '')
  if (db !== '' && !/^\d+$/.test(db))
    throw new InvalidArgumentError(`open() target ${JSON.stringify(t)}: database ${JSON.stringify(db)} is not a number`)
  return t
}
