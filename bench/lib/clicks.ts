/*
 * The clicks of the windowed count (`npm run bench -- processing`, `bench/ab-windowed.mts`): users'
 * clicks 10 ms apart in event time with ±1 s of disorder, one in 100 15 s late, on a topic of
 * `PARTITIONS` partitions, then one click per partition far in the future that closes every window.
 */

export const PARTITIONS = 4
export const USERS = 100
/** The windows: 10 s tumbling, 1 s of lateness. */
export const SIZE = 10_000
export const LATENESS = 1000
/** Items per `sendBatch` of the setup. */
export const BATCH = 5000
const BASE = Date.UTC(2026, 0, 1)
const FAR = BASE + 10 * 365 * 86_400_000

/** Click `i`: user, event time 10 ms apart with ±1 s of disorder, one in 100 15 s late. */
export const click = (i: number) => ({
  key: `u${i % USERS}`,
  value: i,
  timestamp: BASE + i * 10 + ((i * 7919) % 2001) - 1000 - (i % 100 === 50 ? 15_000 : 0),
})

/** What `sendClicks` needs of a store (a `Twain` of this tree or of another one). */
interface ClickStore {
  createTopic(name: string, options: { partitions: number; keyType: 'string' }): Promise<unknown>
  producer(topic: string): {
    sendBatch(items: Array<{ key: string; value: number; timestamp: number; partition?: number }>): Promise<unknown>
    close(): Promise<void>
  }
}

/** Create `topic` and write `n` clicks to it, then the click that closes every window in each partition. */
export async function sendClicks(twain: ClickStore, topic: string, n: number): Promise<void> {
  await twain.createTopic(topic, { partitions: PARTITIONS, keyType: 'string' })
  const p = twain.producer(topic)
  for (let i = 0; i < n; i += BATCH)
    await p.sendBatch(Array.from({ length: Math.min(BATCH, n - i) }, (_, j) => click(i + j)))
  await p.sendBatch(
    Array.from({ length: PARTITIONS }, (_, q) => ({ key: `end-${q}`, value: -1, partition: q, timestamp: FAR })),
  )
  await p.close()
}
