// Child: node --import tsx group-exit.ts <dir> <mode>
// Uses a consumer in the given way and must then exit by itself (no process.exit).
import { from, take } from 'rxjs'
import { open } from '../../../src/index.js'
import { sleep } from '../wait.js'

const [dir, mode] = process.argv.slice(2) as [string, string]
const twain = await open(dir, { pollMs: 50 })
await twain.createTopic('t', { partitions: 2 }).catch(() => undefined)
const producer = twain.producer<string>('t')
await producer.send(1, 'x')
await producer.flush()
const opts = { group: 'g', sessionTimeoutMs: 2000, heartbeatIntervalMs: 100, commitIntervalMs: 100 }

if (mode === 'iterate-close') {
  const c = twain.consumer<string>('t', opts)
  for await (const m of c) {
    console.log('got', m.value)
    m.ack()
    break
  }
  await c.close()
  await twain.close()
} else if (mode === 'rx-close') {
  const c = twain.consumer<string>('t', opts)
  await new Promise<void>((resolve) =>
    from(c)
      .pipe(take(1))
      .subscribe({ next: (m) => (console.log('got', m.value), m.ack()), complete: resolve }),
  )
  await c.close()
  await twain.close()
} else if (mode === 'never-iterated') {
  // created, never iterated, never closed; twain never closed either
  const c = twain.consumer<string>('t', opts)
  while (c.assignments().length < 2) await sleep(20)
  console.log('assigned')
} else if (mode === 'polled') {
  const c = twain.consumer<string>('t', opts)
  let m = c.poll()
  while (!m) {
    await sleep(20)
    m = c.poll()
  }
  console.log('got', m.value)
  m.ack()
} else if (mode === 'break-no-close') {
  const c = twain.consumer<string>('t', opts)
  for await (const m of c) {
    console.log('got', m.value)
    m.ack()
    break
  }
} else if (mode === 'twain-close-while-iterating') {
  const c = twain.consumer<string>('t', opts)
  const done = (async () => {
    for await (const m of c) {
      console.log('got', m.value)
      m.ack()
    }
    console.log('ended')
  })()
  await sleep(300)
  await twain.close()
  await done
} else if (mode === 'iterating-keeps-alive') {
  // reads until it sees 'stop' (sent by the parent later); nothing else keeps the process alive
  const c = twain.consumer<string>('t', opts)
  for await (const m of c) {
    console.log('got', m.value)
    m.ack()
    if (m.value === 'stop') break
  }
  await c.close()
  await twain.close()
} else throw new Error(`unknown mode ${mode}`)
console.log('done')
