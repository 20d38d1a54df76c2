// The gateway's bearer-token auth (src/gateway/auth/auth-tokens.ts): an auth file's grants on stream-name
// patterns, 401 without a valid token, 403 outside the grants, and files that are refused with the
// entry and the fault named.
import { createHash } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { TokenAuth } from '../../src/gateway/auth/auth-tokens.js'
import { InvalidArgumentError } from '../../src/index.js'
import { tempDir } from '../helpers/tmp.js'

const dir = tempDir('twainmq-auth-')
afterAll(() => dir.remove())

const READER = 'reader-token-0123456789'
const WRITER = 'writer-token-abcdefghij'
const sha = (s: string) => createHash('sha256').update(s).digest('hex')

async function fromFile(content: unknown): Promise<TokenAuth> {
  const file = join(dir.dir, `auth-${Math.random().toString(36).slice(2)}.json`)
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content))
  return TokenAuth.load(file)
}

describe('TokenAuth', () => {
  it('allows what each token is granted, 403 outside it, 401 without a valid bearer token', async () => {
    const auth = await fromFile({
      tokens: [
        { name: 'dashboard', token: READER, read: ['orders.*', 'metrics', 'a+b?'] },
        { name: 'ingest', sha256: sha(WRITER), read: ['*'], write: ['orders.*'] },
      ],
    })
    const bearer = (t: string) => `Bearer ${t}`
    expect(auth.check(bearer(READER), 'orders.eu', 'read')).toEqual({ allowed: true, principal: 'dashboard' })
    expect(auth.check(bearer(READER), 'metrics', 'read')).toMatchObject({ allowed: true })
    expect(auth.check(bearer(READER), 'a+bc', 'read')).toMatchObject({ allowed: true }) // + is literal, ? one character
    expect(auth.check(bearer(READER), 'aab', 'read')).toMatchObject({ allowed: false, status: 403 })
    expect(auth.check(bearer(READER), 'metrics2', 'read')).toMatchObject({ allowed: false, status: 403 })
    expect(auth.check(bearer(READER), 'orders', 'read')).toMatchObject({ allowed: false, status: 403 })
    for (const op of ['append', 'create', 'delete'] as const) {
      expect(auth.check(bearer(READER), 'orders.eu', op)).toEqual({
        allowed: false,
        status: 403,
        reason: 'dashboard may not write stream "orders.eu"',
      })
      expect(auth.check(bearer(WRITER), 'orders.eu', op)).toEqual({ allowed: true, principal: 'ingest' })
    }
    expect(auth.check(`bearer   ${WRITER}`, 'anything', 'read')).toMatchObject({ allowed: true }) // scheme case-insensitive
    expect(auth.check(bearer(WRITER), 'logs', 'append')).toMatchObject({ allowed: false, status: 403 })
    expect(auth.check(undefined, 'metrics', 'read')).toEqual({
      allowed: false,
      status: 401,
      reason: 'a bearer token is required',
    })
    expect(auth.check(`Basic ${READER}`, 'metrics', 'read')).toMatchObject({ allowed: false, status: 401 })
    expect(auth.check(bearer(READER.slice(0, -1)), 'metrics', 'read')).toEqual({
      allowed: false,
      status: 401,
      reason: 'the token is not valid',
    })
    expect(auth.check(bearer(`${READER}x`), 'metrics', 'read')).toMatchObject({ allowed: false, status: 401 })
  })

  it('refuses a bad auth file, naming the entry and what is wrong', async () => {
    const cases: Array<[unknown, RegExp]> = [
      ['{ not json', /not valid JSON/],
      [[], /expected an object/],
      [{ tokens: [] }, /"tokens" must be a non-empty array/],
      [{ tokens: [{ token: READER, read: ['*'] }], extra: 1 }, /Unknown .*"extra"/],
      [{ tokens: [{ read: ['*'] }] }, /tokens\[0\] needs exactly one of "token" and "sha256"/],
      [{ tokens: [{ token: READER, sha256: sha(READER), read: ['*'] }] }, /tokens\[0\] needs exactly one/],
      [{ tokens: [{ token: 'short', read: ['*'] }] }, /tokens\[0\]: "token" must be a string of at least 16/],
      [{ tokens: [{ sha256: 'abc', read: ['*'] }] }, /tokens\[0\]: "sha256" must be 64 hex digits, got "abc"/],
      [
        {
          tokens: [
            { token: READER, read: ['*'] },
            { sha256: sha(READER), write: ['x'] },
          ],
        },
        /tokens\[1\]: the same token/,
      ],
      [{ tokens: [{ token: READER }] }, /tokens\[0\] grants nothing/],
      [{ tokens: [{ token: READER, read: 'orders' }] }, /"read" must be an array/],
      [
        { tokens: [{ token: READER, write: [''] }] },
        /tokens\[0\]\.write\[0\]: a stream-name pattern must be a non-empty string/,
      ],
      [{ tokens: [{ token: READER, read: ['*'], admin: true }] }, /Unknown .*"admin"/],
    ]
    for (const [content, why] of cases) {
      const e = await fromFile(content).then(
        () => undefined,
        (err: unknown) => err,
      )
      expect(e, JSON.stringify(content)).toBeInstanceOf(InvalidArgumentError)
      expect((e as Error).message).toMatch(why)
    }
    await expect(TokenAuth.load(join(dir.dir, 'missing.json'))).rejects.toThrow(
      /Cannot read the auth file .*missing\.json/,
    )
  })
})
