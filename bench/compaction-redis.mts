// Compacted topic on Redis: history() of 1,000,000 updates over 5,000 keys before and after one
// compaction pass, and how long the pass takes (the goal: a table's ready() ≤ 5% of a history over
// the uncompacted topic). The same updates go to a plain topic (history "before") and to a compacted
// one written by a store whose background passes are off, compacted once with compact() (timed),
// then read (history "after"). Starts its own redis-server on a free loopback port (stopped by PID).
// usage: npx tsx bench/compaction-redis.mts [updates=1000000] [keys=5000]
import { randomBytes } from 'node:crypto'
import type { TopicMeta } from '../src/backends/backend.js'
import { RedisBackend } from '../src/backends/redis/redis-backend.js'
import { open } from '../src/index.js'
import { records } from '../test/contract/fixture.js'
import { RedisServer } from '../test/helpers/redis-server.js'

const N = Number(process.argv[2] ?? 1_000_000)
const KEYS = Number(process.argv[3] ?? 5000)
const server = await RedisServer.start()
try {
  const prefix = `bench${randomBytes(3).toString('hex')}:`
  const writer = await RedisBackend.connect(
    { url: server.url, cluster: false },
    { prefix, clientId: 'writer', compactEveryMs: 3_600_000 },
  )
  const meta = (name: string, compact: boolean): TopicMeta => ({
    name,
    partitions: 1,
    keyType: 'string',
    messageTypes: [],
    retention: {},
    maxMessageBytes: 1024 * 1024,
    createdAt: Date.now(),
    ...(compact ? { compact } : {}),
  })
  const plain = meta('plain', false)
  const compacted = meta('c', true)
  await writer.createTopic(plain)
  await writer.createTopic(compacted)
  const pad = 'x'.repeat(40)
  for (let i = 0; i < N; i += 5000) {
    const batch = Array.from({ length: Math.min(5000, N - i) }, (_, j) => ({
      key: `key-${(i + j) % KEYS}`,
      value: JSON.stringify({ n: i + j, pad }),
    }))
    await writer.append('plain', 0, records(plain, batch), 'w')
    await writer.append('c', 0, records(compacted, batch), 'w')
  }
  const twain = await open(server.url, { prefix })
  const history = async (topic: string): Promise<{ ms: number; n: number }> => {
    const t0 = performance.now()
    let n = 0
    for await (const _ of twain.history(topic)) n++
    return { ms: performance.now() - t0, n }
  }
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number
  const runs = async (topic: string): Promise<{ ms: number[]; n: number }> => {
    const ms: number[] = []
    let n = 0
    for (let r = 0; r < 3; r++) {
      const h = await history(topic)
      ms.push(h.ms)
      n = h.n
    }
    return { ms, n }
  }
  const before = await runs('plain')
  const t0 = performance.now()
  const stats = await writer.compact('c')
  const passMs = performance.now() - t0
  const after = await runs('c')
  const b = median(before.ms)
  const a = median(after.ms)
  const list = (xs: number[]) => xs.map((x) => x.toFixed(1)).join(' ')
  console.log(`updates ${N}, keys ${KEYS}`)
  console.log(`history, uncompacted: ${before.n} messages, median ${b.toFixed(0)} ms (${list(before.ms)})`)
  console.log(`compaction pass: ${passMs.toFixed(0)} ms; ${JSON.stringify(stats)}`)
  console.log(`history, compacted: ${after.n} messages, median ${a.toFixed(1)} ms (${list(after.ms)})`)
  console.log(
    `compacted / uncompacted history: ${((a / b) * 100).toFixed(2)} %; pass / uncompacted history: ${((passMs / b) * 100).toFixed(0)} %`,
  )
  await twain.close()
  await writer.close()
} finally {
  await server.destroy()
}
