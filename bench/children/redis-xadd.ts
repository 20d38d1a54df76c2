/*
 * Child of the raw Redis tail floor (bench/lib/floor-tail.ts): after "go", appends one entry every
 * `intervalMs` with a plain `XADD key * t <wall-clock time at the call>` (awaited) through ioredis.
 * argv: <redis url> <stream key> <count> <intervalMs>
 */
import { Redis } from 'ioredis'
import { tellParent, waitForGo } from '../lib/child.js'
import { sleep, machineNow } from '../lib/stats.js'

const [url, key, countText, intervalText] = process.argv.slice(2) as [string, string, string, string]
const redis = new Redis(url, { protocol: 2 })
try {
  await redis.xadd(key, '*', 't', 'warm-up')
  tellParent({ type: 'ready' })
  await waitForGo()
  for (let i = 0; i < Number(countText); i++) {
    await redis.xadd(key, '*', 't', String(machineNow()))
    await sleep(Number(intervalText))
  }
  tellParent({ type: 'done', sent: Number(countText) })
  redis.disconnect()
  process.disconnect()
} catch (e) {
  tellParent({ type: 'error', message: String((e as Error)?.stack ?? e) })
  process.exitCode = 1
  redis.disconnect()
  process.disconnect()
}
