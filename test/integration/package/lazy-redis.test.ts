// A file-backend app never loads ioredis: the Redis backend is imported when a Redis URL is opened.
// And the main entry loads rxjs's Observable, not rxjs's index (every operator: ~55 ms of an import).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RedisServer } from '../../helpers/redis-server.js'
import { exited, lines, spawnChild } from '../../helpers/spawn.js'
import { tempDir } from '../../helpers/tmp.js'

async function loaded(target: string): Promise<{ ioredis: boolean; cjs: number; rxjsIndex: boolean; rxjs: number }> {
  const child = spawnChild('loaded-modules.ts', [target])
  const out = lines(child)
  expect(await exited(child), out.stderr()).toBe(0)
  return JSON.parse(out.lines.at(-1) as string) as { ioredis: boolean; cjs: number; rxjsIndex: boolean; rxjs: number }
}

describe('the Redis backend is loaded on demand', () => {
  let server: RedisServer
  beforeAll(async () => {
    server = await RedisServer.start()
  })
  afterAll(async () => {
    await server.destroy()
  })

  it('open(<directory>) with a send and a read loads no ioredis; open(redis://…) does', async () => {
    const tmp = tempDir()
    try {
      const file = await loaded(tmp.dir)
      expect(file.ioredis).toBe(false)
      expect(file.rxjsIndex).toBe(false)
      expect(file.rxjs).toBeLessThan(30) // the index alone pulls in over 300 of its modules
      const redis = await loaded(server.url)
      expect(redis.ioredis).toBe(true)
      expect(redis.cjs).toBeGreaterThan(file.cjs)
    } finally {
      tmp.remove()
    }
  }, 60_000)
})
