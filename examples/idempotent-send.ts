// A producer sends orders with an id each, is killed part-way, and a restarted producer sends them
// all again: every order is stored once. The restart is told where the earlier ones are.
// Run: npx tsx examples/idempotent-send.ts
import { fork } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { open } from 'twainmq'

const ORDERS = 1000

if (process.argv[2] === 'child') {
  // Sends every order, 50 at a time; with `stopAt` it dies (no close, no flush) after that many.
  const [, , , dir, stopAt] = process.argv
  const twain = await open(dir!)
  const producer = twain.producer<{ order: number }>('orders')
  let duplicates = 0
  for (let i = 0; i < ORDERS; i += 50) {
    if (stopAt !== undefined && i >= Number(stopAt)) process.kill(process.pid, 'SIGKILL')
    const sent = await Promise.all(
      Array.from({ length: 50 }, (_, j) => producer.send(i + j, { order: i + j }, { id: `order-${i + j}` })),
    )
    duplicates += sent.filter((r) => r.duplicate).length
  }
  console.log(`restarted producer: ${ORDERS} sent, ${duplicates} already stored`)
  await twain.close()
} else {
  const dir = mkdtempSync(join(tmpdir(), 'twainmq-idempotent-'))
  const twain = await open(dir)
  await twain.createTopic('orders', { partitions: 3, keyType: 'u32' })
  const run = (...args: string[]) =>
    new Promise((resolve) =>
      fork(process.argv[1]!, ['child', dir, ...args], { execArgv: process.execArgv }).on('exit', resolve),
    )
  await run('600') // killed after 600 orders
  await run() // sends all 1000 again
  const ids = new Set<string>()
  let stored = 0
  for await (const m of twain.history('orders')) {
    stored++
    ids.add(m.headers['x-twain-id'] ?? '')
  }
  console.log(`stored ${stored} messages, ${ids.size} distinct ids`)
  await twain.close()
  rmSync(dir, { recursive: true, force: true })
  if (stored !== ORDERS || ids.size !== ORDERS) process.exit(1)
}
