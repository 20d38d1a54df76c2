// open() on a Redis it cannot use says why (issue 10): refused connection (host:port), password
// required or wrong, unknown host, TLS mismatch either way,
// with the original error as `cause` — not "Connection is closed.".
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { createServer, type Server } from 'node:tls'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { open } from '../../../src/index.js'
import { openFailure } from '../../helpers/open-failure.js'
import { freePort, RedisServer } from '../../helpers/redis-server.js'
import { tempDir } from '../../helpers/tmp.js'

let secured: RedisServer
let plain: RedisServer
let tls: Server
let tlsPort: number
const certDir = tempDir('twainmq-tls-')

beforeAll(async () => {
  ;[secured, plain] = await Promise.all([RedisServer.start({ args: ['--requirepass', 'sekret'] }), RedisServer.start()])
  // A TLS server with a self-signed certificate (what a TLS-only Redis port looks like to a plain client).
  const key = join(certDir.dir, 'key.pem')
  const cert = join(certDir.dir, 'cert.pem')
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
    ],
    { stdio: 'ignore' },
  )
  tls = createServer({ key: readFileSync(key), cert: readFileSync(cert) }, (s) => s.end())
  tlsPort = await freePort()
  await new Promise<void>((resolve) => tls.listen(tlsPort, '127.0.0.1', resolve))
}, 30_000)

afterAll(async () => {
  await Promise.all([secured.destroy(), plain.destroy(), new Promise((r) => tls.close(r))])
  certDir.remove()
})

describe('open() says why it cannot connect', () => {
  it('a closed port: connection refused, with host:port; cause is the ECONNREFUSED error', async () => {
    const port = await freePort()
    const e = await openFailure(`redis://127.0.0.1:${port}`)
    expect(e.message).toContain(`connection refused by 127.0.0.1:${port} (ECONNREFUSED)`)
    expect(e.message).not.toMatch(/Connection is closed/)
    expect(e.cause).toMatchObject({ code: 'ECONNREFUSED', port })
  })

  it('no password for a server that requires one: NOAUTH, and how to give it', async () => {
    const e = await openFailure(secured.url)
    expect(e.message).toMatch(/requires a password \(NOAUTH\).*redis:\/\/:password@/)
    expect((e.cause as Error).message).toMatch(/^NOAUTH/)
    expect(e.retriable).toBe(false) // retrying cannot help
  })

  it('a wrong password (or user): WRONGPASS, and the password is not in the message', async () => {
    for (const url of [
      `redis://:wrong@127.0.0.1:${secured.port}`,
      `redis://someone:sekret@127.0.0.1:${secured.port}`,
    ]) {
      const e = await openFailure(url)
      expect(e.message).toMatch(/wrong user name or password \(WRONGPASS\)/)
      expect(e.message).not.toMatch(/wrong@|sekret/)
      expect((e.cause as Error).message).toMatch(/^WRONGPASS/)
      expect(e.retriable).toBe(false)
    }
    const ok = await open(`redis://:sekret@127.0.0.1:${secured.port}`, { prefix: 'x:' })
    expect(await ok.ping()).toBe(true)
    await ok.close()
  })

  it('an ACL user that may not use the prefix or scripts: NOPERM at open, not at the first send', async () => {
    const admin = await open(`redis://:sekret@127.0.0.1:${secured.port}`, { prefix: 'x:' })
    await admin.close()
    const { Redis } = await import('ioredis')
    const raw = new Redis({ port: secured.port, host: '127.0.0.1', password: 'sekret', protocol: 2 })
    try {
      await raw.call('ACL', 'SETUSER', 'keys-only', 'on', '>pw', '~x:*', '&*', '+@all', '-@scripting')
      await raw.call('ACL', 'SETUSER', 'elsewhere', 'on', '>pw', '~other:*', '+@all')
    } finally {
      raw.disconnect()
    }
    for (const user of ['keys-only', 'elsewhere']) {
      const e = await openFailure(`redis://${user}:pw@127.0.0.1:${secured.port}`)
      expect(e.message).toMatch(/may not use twainmq's keys or commands \(NOPERM/)
      expect(e.retriable).toBe(false)
    }
  })

  it('an unknown host: ENOTFOUND with the host name', async () => {
    const e = await openFailure('redis://no-such-host.invalid:6380')
    expect(e.message).toContain('unknown host "no-such-host.invalid" (ENOTFOUND)')
    expect(e.cause).toMatchObject({ code: 'ENOTFOUND' })
  })

  it('redis:// to a TLS port: the server drops the plain connection; the message points to rediss://', async () => {
    const e = await openFailure(`redis://127.0.0.1:${tlsPort}`)
    expect(e.message).toMatch(/closed the connection.*rediss:\/\//)
    expect(e.message).not.toMatch(/Connection is closed/)
    expect(e.cause).toBeInstanceOf(Error)
  })

  it('rediss:// with a certificate it cannot verify: says so, with the TLS error code', async () => {
    const e = await openFailure(`rediss://127.0.0.1:${tlsPort}`)
    expect(e.message).toMatch(/TLS certificate .*rejected.*self-signed/i)
    expect(e.cause).toMatchObject({ code: 'DEPTH_ZERO_SELF_SIGNED_CERT' })
  })

  it('rediss:// to a plain port: no TLS handshake; the message points to redis://', async () => {
    const e = await openFailure(`rediss://127.0.0.1:${plain.port}`)
    expect(e.message).toMatch(/no TLS handshake.*plain.*redis:\/\//)
    expect(e.cause).toMatchObject({ code: 'ETIMEDOUT' })
  }, 15_000)
})
