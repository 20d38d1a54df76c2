// A long backlog through RxJS with bounded memory: pullMap reads the tail at the handlers' pace.
// `from(tail).pipe(concatMap(handler))` would read the whole backlog into concatMap's queue at once
// (an Observable has no backpressure); pullMap takes the next record only when a handler is free.
// Run: npx tsx examples/backlog-with-rxjs.ts
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { count, lastValueFrom, take } from 'rxjs'
import { open } from 'twainmq'
import { pullMap } from 'twainmq/rx'

type Click = { user: number; page: string }
const RECORDS = 50_000
const dir = mkdtempSync(join(tmpdir(), 'twainmq-backlog-'))
const twain = await open(dir)
await twain.createTopic('clicks', { keyType: 'u32' })
const producer = twain.producer<Click, number>('clicks')
for (let i = 0; i < RECORDS; i += 10_000) {
  await producer.sendBatch(
    Array.from({ length: 10_000 }, (_, k) => ({ key: i + k, value: { user: (i + k) % 97, page: `/p/${k % 13}` } })),
  )
}

// A slow sink: each write takes a turn of the event loop, and four may run at once.
const pages = new Map<string, number>()
let running = 0
let mostRunning = 0
async function write(c: Click): Promise<string> {
  mostRunning = Math.max(mostRunning, ++running)
  await new Promise((resolve) => setImmediate(resolve))
  pages.set(c.page, (pages.get(c.page) ?? 0) + 1)
  running--
  return c.page
}

const written = await lastValueFrom(
  pullMap(twain.tail<Click, number>('clicks', { from: 'start' }), (m) => write(m.value), { concurrency: 4 }).pipe(
    take(RECORDS), // a tail never ends by itself: stop after the backlog
    count(),
  ),
)
console.log(`wrote ${written} clicks over ${pages.size} pages; at most ${mostRunning} writes at once`)

await twain.close()
rmSync(dir, { recursive: true, force: true })
