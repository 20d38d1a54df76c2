/**
 * The floor of a Redis Streams tail read through ioredis across processes, the counterpart of the
 * peers suite's "tail p50: Redis / JetStream" row: a child appends with a plain `XADD … *` (no
 * dense offsets, no idempotence, no script: less than a twainmq append must do) every ~3 ms, and
 * this process reads with `XREAD BLOCK` from the last ID on a connection of its own. Measured like
 * every tail of bench/lib/tail.ts (wall clock at the send → wall clock at the receive).
 */
import { Redis } from 'ioredis'
import { spawnBenchChild } from './child.js'
import { TAIL_INTERVAL_MS, TAIL_WARMUP, tailAcross, type TailResult } from './tail.js'
import { machineNow } from './stats.js'

export async function rawRedisTail(
  url: string,
  key: string,
  count: number,
  label = 'raw ioredis XADD → XREAD BLOCK, other process',
): Promise<TailResult> {
  const reader = new Redis(url, { protocol: 2 })
  const total = count + TAIL_WARMUP
  try {
    await reader.ping()
    const child = spawnBenchChild('redis-xadd.ts', [url, key, String(total), String(TAIL_INTERVAL_MS)])
    return await tailAcross(label, child, total, (latencies) => {
      let stopped = false
      const done = (async () => {
        let last = '$'
        while (!stopped && latencies.length < total) {
          const res = await reader.xread('BLOCK', 1000, 'STREAMS', key, last)
          const now = machineNow()
          for (const [id, fields] of res?.[0]?.[1] ?? []) {
            last = id
            const sent = Number(fields[1])
            if (Number.isFinite(sent)) latencies.push(now - sent)
          }
        }
      })()
      return {
        done,
        stop: async () => {
          stopped = true
          await done.catch(() => undefined)
        },
      }
    })
  } finally {
    reader.disconnect()
  }
}
