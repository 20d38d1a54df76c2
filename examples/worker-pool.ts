// A pool of worker processes sharing one consumer group: partitions are spread over the workers,
// every job is processed at least once, and the group ends with zero lag.
// Run: npx tsx examples/worker-pool.ts
import { fork, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { open } from 'twainmq'

const WORKERS = 3
const JOBS = 600

if (process.argv[2] === 'worker') {
  const [, , , dir, id] = process.argv
  const twain = await open(dir!)
  const consumer = twain.consumer<{ n: number }>('jobs', {
    group: 'workers',
    name: `worker-${id}`,
    commitIntervalMs: 100,
  })
  consumer.on('assigned', (tps) => console.log(`worker ${id} assigned ${tps.map((t) => t.partition).join(',')}`))
  // Graceful shutdown: close() stops fetching, waits for in-flight acks, commits and leaves the group.
  process.once('SIGTERM', () => void consumer.close())
  let done = 0
  for await (const job of consumer) {
    await new Promise((r) => setTimeout(r, 1)) // "work"
    job.ack()
    done++
  }
  await twain.close()
  console.log(`worker ${id} processed ${done} jobs`)
} else {
  const dir = mkdtempSync(join(tmpdir(), 'twainmq-pool-'))
  const twain = await open(dir)
  await twain.createTopic('jobs', { partitions: 6, keyType: 'u32' })
  const workers: ChildProcess[] = Array.from({ length: WORKERS }, (_, id) =>
    fork(process.argv[1]!, ['worker', dir, String(id)], { execArgv: process.execArgv }),
  )
  const producer = twain.producer<{ n: number }>('jobs')
  await producer.sendBatch(Array.from({ length: JOBS }, (_, n) => ({ key: n, value: { n } })))

  // Wait until the group has committed everything, then stop the workers.
  for (;;) {
    await new Promise((r) => setTimeout(r, 200))
    const g = await twain.describeGroup('workers').catch(() => undefined)
    if (g && g.topics.length === 6 && g.topics.every((t) => t.lag === 0)) break
  }
  await Promise.all(workers.map((w) => new Promise((resolve) => (w.once('exit', resolve), w.kill('SIGTERM')))))
  const g = await twain.describeGroup('workers')
  console.log(
    `all ${JOBS} jobs committed; lag ${g.topics.reduce((n, t) => n + t.lag, 0)}; members left: ${g.members.length}`,
  )
  await twain.close()
  rmSync(dir, { recursive: true, force: true })
}
