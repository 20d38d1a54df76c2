import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { InvalidArgumentError } from './core/errors.js'

/** What an `open()` target names. */
export type Target = { kind: 'file'; root: string } | { kind: 'redis'; url: string; cluster: boolean }

/**
 * Parse an `open()` target: a path or `file:` URL (file backend), `redis://`/`rediss://` (Redis),
 * `redis+cluster://` (Redis Cluster); none → `$TWAINMQ_URL`, else `./.twainmq`.
 */
export function parseTarget(target: string | undefined): Target {
  const t = target ?? process.env.TWAINMQ_URL ?? './.twainmq'
  if (typeof t !== 'string' || t.trim() === '') {
    throw new InvalidArgumentError(`open() target must be a path or URL, got ${JSON.stringify(target)}`)
  }
  if (/^rediss?:\/\//i.test(t)) return { kind: 'redis', url: t, cluster: false }
  if (/^redis\+cluster:\/\//i.test(t)) return { kind: 'redis', url: t, cluster: true }
  if (/^file:/i.test(t)) {
    try {
      return { kind: 'file', root: fileURLToPath(t) }
    } catch (cause) {
      throw new InvalidArgumentError(`open() target ${JSON.stringify(t)} is not a valid file: URL`, { cause })
    }
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(t)) {
    throw new InvalidArgumentError(`open() target ${JSON.stringify(t)} has an unsupported scheme: use a path, file:, redis://, rediss:// or redis+cluster://`)
  }
  return { kind: 'file', root: resolve(t) }
}
