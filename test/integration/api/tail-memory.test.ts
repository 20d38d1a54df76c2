import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RedisServer } from '../../helpers/redis-server.js'
import { exited, lines, spawnChild } from '../../helpers/spawn.js'
import { tempDir } from '../../helpers/tmp.js'

/**
 * A tail that runs for days must not keep what it has delivered: the child tails a quiet topic
 * while it sends it 3,000 values of 2 KiB one at a time (each its own read), and compares its
 * memory after a full GC at 750 and at 3,000 messages. What grows with the reads (a reply kept
 * per read) would be ~2 KiB a message, about 4.5 MiB here; the bound is 1.5 MiB.
 */
const MESSAGES = 3000
const VALUE_BYTES = 2048
const BOUND = 1.5 * 1024 * 1024

async function measure(where: string): Promise<{ received: number; quarter: number; end: number }> {
  const child = spawnChild('tail-memory.ts', [where, String(MESSAGES), String(VALUE_BYTES)], ['--expose-gc'])
  const out = lines(child)
  const code = await exited(child)
  if (code !== 0) throw new Error(`tail-memory child exited with ${code}: ${out.stderr()}`)
  return JSON.parse(out.lines.at(-1) as string) as { received: number; quarter: number; end: number }
}

describe('a long tail keeps no memory per read', () => {
  let server: RedisServer
  let tmp: { dir: string; remove: () => void }
  beforeAll(async () => {
    server = await RedisServer.start()
    tmp = tempDir('tail-memory-')
  })
  afterAll(async () => {
    await server?.destroy()
    tmp?.remove()
  })

  it.each(['file', 'redis'])(
    '%s',
    async (kind) => {
      const r = await measure(kind === 'redis' ? server.url : tmp.dir)
      expect(r.received).toBe(MESSAGES)
      expect(r.end - r.quarter, `grew from ${r.quarter} to ${r.end} bytes`).toBeLessThan(BOUND)
    },
    120_000,
  )
})
