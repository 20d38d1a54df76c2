// keySlot() (src/backends/redis/key-slot.ts) against a real server's CLUSTER KEYSLOT: hash tags,
// empty tags, several braces, non-ASCII keys and random keys.
import fc from 'fast-check'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { keySlot } from '../../../src/backends/redis/key-slot.js'
import { RedisServer } from '../../helpers/redis-server.js'

let server: RedisServer
let admin: Redis
beforeAll(async () => {
  server = await RedisServer.start({ args: ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf'] })
  admin = new Redis({ port: server.port, host: '127.0.0.1', protocol: 2 })
})
afterAll(async () => {
  admin?.disconnect()
  await server?.destroy()
})

describe('keySlot', () => {
  it('agrees with CLUSTER KEYSLOT on chosen keys', async () => {
    const keys = [
      'foo',
      '{user1000}.following',
      'twainmq:{t:0}',
      'twainmq:{t:0}:end',
      'a{}b',
      '{}{x}',
      '{a}{b}',
      'x{',
      'x}y{z',
      'é{ü}',
      '',
    ]
    for (const k of keys) expect(keySlot(k), k).toBe(Number(await admin.call('CLUSTER', 'KEYSLOT', k)))
  })

  it('agrees with CLUSTER KEYSLOT on random keys', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: fc.constantFrom('a', 'b', '{', '}', ':', 'é', '1'), maxLength: 12 }),
        async (k) => {
          expect(keySlot(k)).toBe(Number(await admin.call('CLUSTER', 'KEYSLOT', k)))
        },
      ),
      { numRuns: 300 },
    )
  })
})
