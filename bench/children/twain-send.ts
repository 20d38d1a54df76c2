/*
 * Child of the twainmq tail benchmark: opens the same root, and after "go" sends one message every
 * `intervalMs` (after one warm-up send the parent's tail does not see) with `producer.send` (awaited); the value is its wall-clock timestamp at the call.
 * argv: <root> <topic> <count> <intervalMs>
 */
import { open } from '../../src/index.js'
import { tellParent, waitForGo } from '../lib/child.js'
import { sleep, machineNow } from '../lib/stats.js'

const [root, topic, countText, intervalText] = process.argv.slice(2)
try {
  const count = Number(countText)
  const intervalMs = Number(intervalText)
  const twain = await open(root as string)
  const producer = twain.producer<string>(topic as string)
  // Warm the write path (topic metadata, appender, lock) before the parent starts its tail at the end.
  await producer.send(0, 'warm-up')
  tellParent({ type: 'ready' })
  await waitForGo()
  for (let i = 0; i < count; i++) {
    await producer.send(i, String(machineNow()))
    await sleep(intervalMs)
  }
  await twain.close()
  tellParent({ type: 'done', sent: count })
  process.disconnect()
} catch (e) {
  tellParent({ type: 'error', message: String((e as Error)?.stack ?? e) })
  process.exitCode = 1
  process.disconnect()
}
