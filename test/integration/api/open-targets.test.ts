// open() targets and options that used to do something silently wrong: an empty TWAINMQ_URL, a
// relative file: URL, a one-slash redis: URL, a bad port, a Redis database the server does not have,
// and a tail `from` that is not one of the documented forms.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { BackendError, InvalidArgumentError, open } from '../../../src/index.js'
import { parseTarget } from '../../../src/facade/open-target.js'
import { RedisServer } from '../../helpers/redis-server.js'
import { tempDir } from '../../helpers/tmp.js'

describe('open() targets', () => {
  const saved = process.env.TWAINMQ_URL
  afterEach(() => {
    if (saved === undefined) delete process.env.TWAINMQ_URL
    else process.env.TWAINMQ_URL = saved
  })

  it('an empty TWAINMQ_URL is unset: the default ./.twainmq', () => {
    process.env.TWAINMQ_URL = ''
    expect(parseTarget(undefined)).toEqual({ kind: 'file', root: join(process.cwd(), '.twainmq') })
  })

  it('file:./data and file:data are relative to the working directory, file:///abs is absolute', () => {
    expect(parseTarget('file:./data')).toEqual({ kind: 'file', root: join(process.cwd(), 'data') })
    expect(parseTarget('file:data')).toEqual({ kind: 'file', root: join(process.cwd(), 'data') })
    expect(parseTarget('file:///var/lib/app')).toEqual({ kind: 'file', root: '/var/lib/app' })
  })

  it('redis: with one slash (or none) is refused, not taken as a directory named "redis:"', () => {
    for (const t of ['redis:/localhost:6379', 'redis:localhost:6379', 'rediss:/h:1']) {
      expect(() => parseTarget(t)).toThrow(InvalidArgumentError)
      expect(() => parseTarget(t)).toThrow(/two slashes/)
    }
  })

  it('any other scheme is refused, with or without slashes (mailto:x is not a directory); a drive letter and ./name:x are paths', () => {
    for (const t of ['mailto:x', 'http://h/x', 'ftp://h', 'data:text', 'urn:isbn:1']) {
      expect(() => parseTarget(t), t).toThrow(InvalidArgumentError)
      expect(() => parseTarget(t), t).toThrow(
        new RegExp(`target "${t.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}" has an unsupported scheme`),
      )
      // A name like mailto:x may be a directory someone meant; one with // is not.
      expect(() => parseTarget(t), t).toThrow(
        t.includes('//') ? /redis\+cluster:\/\/$/ : new RegExp(`\\(a directory whose name has a colon: \\./${t}\\)$`),
      )
    }
    expect(parseTarget('./mailto:x')).toEqual({ kind: 'file', root: join(process.cwd(), 'mailto:x') })
    expect(parseTarget('C:data')).toEqual({ kind: 'file', root: join(process.cwd(), 'C:data') })
  })

  it("the other backend's options are refused, naming them (they would do nothing)", async () => {
    const tmp = tempDir()
    try {
      await expect(open(tmp.dir, { prefix: 'app:' })).rejects.toThrow(
        /open\(\) of a directory target does not take the option prefix: "app:": it is for Redis targets/,
      )
      await expect(open(tmp.dir, { replicaAckTimeoutMs: 500 })).rejects.toThrow(InvalidArgumentError)
      await expect(open('redis://127.0.0.1:1', { segmentBytes: 4096, fsync: 'always' })).rejects.toThrow(
        /open\(\) of a Redis target does not take the options fsync: "always", segmentBytes: 4096: they are for the file backend/,
      )
      await expect(open('redis://127.0.0.1:1', { pollMs: 50 })).rejects.toThrow(InvalidArgumentError)
    } finally {
      tmp.remove()
    }
  })

  it('a bad port or database in a Redis URL is an InvalidArgumentError naming it', () => {
    expect(() => parseTarget('redis://localhost:99999')).toThrow(InvalidArgumentError)
    expect(() => parseTarget('redis://localhost:abc')).toThrow(InvalidArgumentError)
    expect(() => parseTarget('redis://localhost:6379/x')).toThrow(/database "x"/)
    expect(parseTarget('redis://localhost:6379/3')).toEqual({
      kind: 'redis',
      url: 'redis://localhost:6379/3',
      cluster: false,
    })
  })
})

describe('a Redis database the server does not have', () => {
  let redis: RedisServer
  beforeAll(async () => {
    redis = await RedisServer.start()
  })
  afterAll(async () => {
    await redis.stop()
  })

  it('open(redis://…/99) on a server with 16 databases rejects instead of using database 0', async () => {
    await expect(open(`${redis.url}/99`)).rejects.toMatchObject({
      name: 'InvalidArgumentError',
      message: expect.stringContaining('no database 99'),
    })
    const ok = await open(`${redis.url}/3`)
    await ok.close()
  })

  it('a prefix with a brace is refused: its hash tag would put every key in one Redis Cluster slot, or break scripts with CROSSSLOT', async () => {
    for (const prefix of ['app{1}:', 'x}', '{']) {
      await expect(open(redis.url, { prefix })).rejects.toMatchObject({
        name: 'InvalidArgumentError',
        message: expect.stringContaining(JSON.stringify(prefix)),
      })
    }
    const ok = await open(redis.url, { prefix: 'app-1:' })
    await ok.close()
  })
})

describe('tail({ from })', () => {
  it('an unknown from (e.g. "begin") is an InvalidArgumentError naming it, not a TypeError later', async () => {
    const tmp = tempDir()
    const twain = await open(tmp.dir)
    try {
      await twain.createTopic('t')
      for (const from of ['begin', { offset: -1 }, { time: 'yesterday' }, 42]) {
        expect(() => twain.tail('t', { from: from as never })).toThrow(InvalidArgumentError)
      }
      expect(() => twain.tail('t', { from: 'begin' as never })).toThrow(/"begin"/)
      await twain.tail('t', { from: { offset: { 0: 5 } } }).close()
      await twain.tail('t', { from: { time: new Date() } }).close()
    } finally {
      await twain.close()
      tmp.remove()
    }
    expect(existsSync(tmp.dir)).toBe(false)
  })
})

describe('open() of a path that cannot be a store', () => {
  it('a store path that is a file, lies under a file or cannot hold directories (/proc) is a BackendError, at once', async () => {
    const tmp = tempDir()
    try {
      const file = join(tmp.dir, 'plain-file')
      writeFileSync(file, 'x')
      const cases: Array<[string, RegExp]> = [
        [file, /plain-file as the store directory: it exists and is not a directory/],
        [join(file, 'sub'), /plain-file\/sub as the store directory/],
        [join(file, 'sub', 'deeper'), /sub\/deeper as the store directory/],
        // Node 20's recursive mkdir retries forever here (95 % CPU); ours fails once.
        ['/proc/twainmq-test/x', /\/proc does not accept new directories/],
      ]
      for (const [path, text] of cases) {
        const err = await open(path).then(
          () => undefined,
          (e: unknown) => e,
        )
        expect(err, path).toBeInstanceOf(BackendError)
        expect((err as BackendError).retriable, path).toBe(false)
        expect(String((err as Error).message), path).toMatch(text)
      }
    } finally {
      tmp.remove()
    }
  }, 10_000)
})
