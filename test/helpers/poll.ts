// Polling a consumer in tests: non-blocking `pollMany` calls in a loop until enough came.
import type { GroupMessage } from '../../src/index.js'
import { until } from './wait.js'

/** Wait until `poll()` has handed out `n` messages (either group mode). */
export async function pollN<V>(
  c: { pollMany(n?: number): GroupMessage<V>[] },
  n: number,
  ms = 5000,
): Promise<GroupMessage<V>[]> {
  const out: GroupMessage<V>[] = []
  await until(
    () => {
      out.push(...c.pollMany(n - out.length))
      return out.length >= n
    },
    ms,
    `${n} polled messages (got ${out.length})`,
  )
  return out
}
