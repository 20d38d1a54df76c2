// Child: node --import tsx shared-exit.ts <url> <prefix> <mode>
// Uses a shared-group consumer (Redis) in the given way and must then exit by itself (no process.exit).
import { open } from '../../../src/index.js'
import { sleep } from '../wait.js'

const [url, prefix, mode] = process.argv.slice(2) as [string, string, string]
const twain = await open(url, { prefix })
await twain.createTopic('t', { partitions: 2 }).catch(() => undefined)
await twain.producer<string>('t').send(1, 'x')
const opts = { group: 'g', mode: 'shared' as const, claimAfterMs: 300, heartbeatIntervalMs: 100, commitIntervalMs: 100 }

if (mode === 'break-no-close') {
  // iterated, left with break; neither the consumer nor twain closed
  const c = twain.consumer<string>('t', opts)
  for await (const m of c) {
    console.log('got', m.value)
    m.ack()
    break
  }
} else if (mode === 'never-iterated') {
  const c = twain.consumer<string>('t', opts)
  while (c.assignments().length < 2) await sleep(20)
  console.log('assigned')
} else if (mode === 'iterate-close') {
  const c = twain.consumer<string>('t', opts)
  for await (const m of c) {
    console.log('got', m.value)
    m.ack()
    break
  }
  await c.close()
  await twain.close()
} else throw new Error(`unknown mode ${mode}`)
console.log('done')
