// Clicks counted per user in 10-second windows of event time (each click's timestamp), exactly
// once: the clicks come a little out of order and one comes 15 s late. A window's count is sent to
// 'clicks-per-10s' once the partition's watermark (the latest click time seen, less 1 s of allowed
// lateness) passes its end; the late click goes to 'late-clicks'. No click closes the last
// windows: once the partition has been idle for half a second, its watermark moves on with the
// wall clock (`idleMs`) and closes them.
// Run: npx tsx examples/windowed-counts.ts
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { open, tumbling, windowed, type WindowResult } from 'twainmq'

const dir = mkdtempSync(join(tmpdir(), 'twainmq-windows-'))
const twain = await open(dir)
await twain.createTopic('clicks', { partitions: 1, keyType: 'string' })
await twain.createTopic('clicks-per-10s', { partitions: 1, keyType: 'string' })
await twain.createTopic('late-clicks', { partitions: 1, keyType: 'string' })

// 40 clicks of ada and bob, 1 s apart in event time, each up to 0.6 s early or late; then one of
// ada's 15 s late.
const t0 = Date.UTC(2026, 11, 5, 12, 0, 0)
const clicks = Array.from({ length: 40 }, (_, i) => ({
  key: i % 2 === 0 ? 'ada' : 'bob',
  value: `/p/${i}`,
  timestamp: t0 + i * 1000 + ((i * 7) % 13) * 100 - 600,
}))
clicks.push({ key: 'ada', value: '/late', timestamp: t0 + 39_000 - 15_000 })
await twain.producer<string, string>('clicks').sendBatch(clicks)

const proc = twain.processor<string, string>('clicks', { group: 'per-10s', state: 'windows' })
let late = 0
const results = windowed(proc, {
  window: tumbling(10_000),
  latenessMs: 1000,
  to: 'clicks-per-10s',
  lateTo: 'late-clicks',
  initial: () => 0,
  add: (n) => n + 1,
  onLate: () => late++,
  idleMs: 500,
})
const seen: Array<WindowResult<number, string>> = []
for await (const r of results) {
  seen.push(r)
  console.log(
    `${r.key} ${new Date(r.start).toISOString().slice(11, 19)}–${new Date(r.end).toISOString().slice(11, 19)}: ${r.value}`,
  )
  // The windows from 12:00:30 close once the partition is idle: no later click moves the watermark past their end.
  if (seen.length === 9) break
}
await proc.close()
console.log(`late clicks: ${late}`)

let stored = 0
for await (const _ of twain.history('clicks-per-10s')) stored++
let sideLined = 0
for await (const _ of twain.history('late-clicks')) sideLined++
console.log(`clicks-per-10s: ${stored} results; late-clicks: ${sideLined}`)
await twain.close()
rmSync(dir, { recursive: true, force: true })
