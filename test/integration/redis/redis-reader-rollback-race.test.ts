// A Redis partition reader that learns of a rollback while a read is under way goes back and reads
// again; it does not answer that read with nothing. `history` takes an empty read as the end of a
// partition, so an empty answer there ended a history short: records the log holds, not returned.
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RedisBackend } from '../../../src/backends/redis/redis-backend.js'
import type { RollbackNotice } from '../../../src/backends/redis/incarnations.js'
import { records, topicMeta } from '../../contract/fixture.js'
import { RedisServer } from '../../helpers/redis-server.js'

describe('Redis reader: a rollback notice during a read', () => {
  let server: RedisServer
  beforeAll(async () => {
    server = await RedisServer.start()
  })
  afterAll(async () => {
    await server?.destroy()
  })

  it('reads again from where it was instead of returning nothing', async () => {
    const b = await RedisBackend.connect(
      { url: server.url, cluster: false },
      { prefix: `k${randomBytes(4).toString('hex')}:`, clientId: 'race' },
    )
    try {
      const meta = topicMeta('t')
      await b.createTopic(meta)
      await b.append(
        't',
        0,
        records(
          meta,
          Array.from({ length: 20 }, (_, i) => `v${i}`),
        ),
        'p',
      )
      const reader = await b.openReader('t', 0, 0)
      // The watcher reports a rollback from offset 5 once the first read is on its way (as a
      // failover found by the watcher while the read script ran would).
      const internals = reader as unknown as { watcher: { recent(): unknown; rollback(): RollbackNotice | undefined } }
      const real = internals.watcher
      let reads = 0
      const notice: RollbackNotice = { seq: 1_000_000, from: 5 }
      internals.watcher = {
        recent: () => real.recent(),
        rollback: () => (reads++ >= 1 ? notice : real.rollback()),
      }
      const got = await reader.read(100)
      expect(got.map((m) => m.value)).toEqual(Array.from({ length: 20 }, (_, i) => `v${i}`))
      expect(reader.next).toBe(20)
      await reader.close()
    } finally {
      await b.close()
    }
  })
})
