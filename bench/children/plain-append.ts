/*
 * Child of the plain tail baseline: after "go", appends one line (its wall-clock timestamp) to a
 * file every `intervalMs`, with `fs.writeSync` on an fd opened for appending.
 * argv: <file> <count> <intervalMs>
 */
import { closeSync, openSync, writeSync } from 'node:fs'
import { tellParent, waitForGo } from '../lib/child.js'
import { sleep, machineNow } from '../lib/stats.js'

const [file, countText, intervalText] = process.argv.slice(2)
try {
  const count = Number(countText)
  const intervalMs = Number(intervalText)
  const fd = openSync(file as string, 'a')
  tellParent({ type: 'ready' })
  await waitForGo()
  for (let i = 0; i < count; i++) {
    writeSync(fd, `${machineNow()}\n`)
    await sleep(intervalMs)
  }
  closeSync(fd)
  tellParent({ type: 'done', sent: count })
  process.disconnect()
} catch (e) {
  tellParent({ type: 'error', message: String((e as Error)?.stack ?? e) })
  process.exitCode = 1
  process.disconnect()
}
