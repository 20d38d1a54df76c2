import { ConnectionError } from '../../core/errors.js'
import { REFUSED_RE } from './connection.js'

/** TLS verification failures Node reports by code. */
const CERT_CODES = /CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)|ERR_TLS_CERT_ALTNAME/

/** `redis://:secret@h` → `redis://:***@h`. */
export const redact = (url: string): string => url.replace(/\/\/([^@/]*):[^@/]*@/, '//$1:***@')

/** Host and port of a Redis URL, as written (`host:port`; 6379 when it has none). */
function address(url: string): { host: string; port: string; tls: boolean } {
  try {
    const u = new URL(url)
    return { host: u.hostname.replace(/^\[|\]$/g, ''), port: u.port || '6379', tls: u.protocol === 'rediss:' }
  } catch {
    return { host: url, port: '6379', tls: false }
  }
}

/** Why a connection attempt failed, in words, from the first error the client reported. */
function reason(
  url: string,
  e: Error & { code?: string; address?: string; port?: number; hostname?: string },
  connectTimeoutMs: number,
): string {
  const { host, port, tls } = address(url)
  const code = e.code ?? ''
  const msg = e.message
  if (/^NOAUTH/.test(msg))
    return `the server requires a password (NOAUTH): give it in the URL, redis://:password@${host}:${port} (or redis://user:password@… for an ACL user)`
  if (/^WRONGPASS|invalid password|invalid username-password/i.test(msg))
    return `wrong user name or password (WRONGPASS): check the user and password in the URL`
  if (/^NOPERM/.test(msg))
    return `the user may not use twainmq's keys or commands (${msg}): its ACL needs the key prefix's keys (~<prefix>*), channels (&<prefix>*) and the stream, hash, string, set, sorted-set, pub/sub and scripting commands`
  if (code === 'ECONNREFUSED')
    return `connection refused by ${e.address ?? host}:${e.port ?? port} (ECONNREFUSED): is redis-server running and listening there?`
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    return `unknown host "${e.hostname ?? host}" (${code}): check the host name in the URL`
  // A Cluster passes on no more than "Connection is closed." from its nodes.
  if (/^redis\+cluster:/i.test(url) && /Connection is closed|startup nodes/.test(msg))
    return `none of the startup nodes answered (${msg}): are they running and reachable, with cluster mode on?`
  if (tls && CERT_CODES.test(code)) return `the server's TLS certificate was rejected: ${msg} (${code})`
  if (tls && (code === 'ETIMEDOUT' || code === 'EPROTO' || /wrong version number|ssl|tls/i.test(msg))) {
    return `no TLS handshake with ${host}:${port} (${code || msg}${code === 'ETIMEDOUT' ? ` after ${connectTimeoutMs} ms` : ''}): rediss:// needs a TLS port; if it is a plain port, use redis://`
  }
  if (!tls && (code === 'ECONNRESET' || code === 'EPIPE' || /Connection is closed/.test(msg))) {
    return `the server closed the connection at once (${code || 'before any reply'}): if that port speaks TLS, use rediss://; else see the server's log (maxclients, protected mode)`
  }
  if (code === 'ETIMEDOUT') return `no answer from ${host}:${port} within ${connectTimeoutMs} ms (ETIMEDOUT)`
  return code && !msg.includes(code) ? `${msg} (${code})` : msg
}

/**
 * The `ConnectionError` of a failed connect: ioredis rejects `connect()` with "Connection is closed."
 * and reports the real failure (ECONNREFUSED, NOAUTH, a TLS error…) only as an `'error'` event, so
 * the caller collects those events and passes the first one here; it becomes the `cause`.
 */
export function connectError(
  url: string,
  first: Error | undefined,
  rejection: unknown,
  connectTimeoutMs: number,
): ConnectionError {
  const cause = first ?? (rejection instanceof Error ? rejection : new Error(String(rejection)))
  return new ConnectionError(`Cannot connect to Redis at ${redact(url)}: ${reason(url, cause, connectTimeoutMs)}`, {
    cause,
    retriable: !REFUSED_RE.test(cause.message),
  })
}
