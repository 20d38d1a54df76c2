import { Redis } from 'ioredis'
import { afterAll, beforeAll } from 'vitest'
import { open, type Twain } from '../../src/index.js'
import { RedisServer } from './redis-server.js'

/** What {@link useRedisTwain} sets up: filled in by its `beforeAll`. */
export interface RedisTwain {
  /** A private redis-server on a free loopback port. */
  server: RedisServer
  /** A plain client on it (RESP2), for looking at or changing the server behind twainmq's back. */
  admin: Redis
  /** `open(server.url, { prefix })`. */
  twain: Twain
}

/**
 * For one test file: start a private redis-server, an admin client and a twain on it with `prefix`
 * before its tests (vitest `beforeAll`), and close all three after them.
 */
export function useRedisTwain(prefix: string): RedisTwain {
  const ctx = {} as RedisTwain
  beforeAll(async () => {
    ctx.server = await RedisServer.start()
    ctx.admin = new Redis({ port: ctx.server.port, host: '127.0.0.1', protocol: 2 })
    ctx.twain = await open(ctx.server.url, { prefix })
  })
  afterAll(async () => {
    await ctx.twain?.close()
    ctx.admin?.disconnect()
    await ctx.server?.destroy()
  })
  return ctx
}
