/*
 * Child of the JetStream tail benchmark: after "go", publishes one message every `intervalMs`
 * with `js.publish` (awaited: the PubAck came back); the payload is its wall-clock time at the call.
 * argv: <nats url> <subject> <count> <intervalMs>
 */
import { connect, StringCodec } from 'nats'
import { tellParent, waitForGo } from '../lib/child.js'
import { sleep, machineNow } from '../lib/stats.js'

const [url, subject, countText, intervalText] = process.argv.slice(2) as [string, string, string, string]
try {
  const sc = StringCodec()
  const nc = await connect({ servers: url })
  const js = nc.jetstream()
  await js.publish(subject, sc.encode('warm-up'))
  tellParent({ type: 'ready' })
  await waitForGo()
  for (let i = 0; i < Number(countText); i++) {
    await js.publish(subject, sc.encode(String(machineNow())))
    await sleep(Number(intervalText))
  }
  await nc.drain()
  tellParent({ type: 'done', sent: Number(countText) })
  process.disconnect()
} catch (e) {
  tellParent({ type: 'error', message: String((e as Error)?.stack ?? e) })
  process.exitCode = 1
  process.disconnect()
}
