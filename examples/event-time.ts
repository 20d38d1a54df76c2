// Sensors send readings with the time they were measured, some late (a sensor was offline): a
// dashboard group replays the last hour by event time, and a backfill of old readings lands after
// the live ones in the log but keeps its own time.
// Run: npx tsx examples/event-time.ts
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { open } from 'twainmq'

interface Reading {
  sensor: number
  celsius: number
}

const dir = mkdtempSync(join(tmpdir(), 'twainmq-event-time-'))
const twain = await open(dir)
const now = Date.now()
const minutes = (n: number) => n * 60_000
try {
  await twain.createTopic('readings', { keyType: 'u32' })
  const readings = twain.producer<Reading, number>('readings')
  // Live readings of the last three hours, one every 20 minutes...
  for (let ago = 180; ago >= 0; ago -= 20)
    await readings.send(1, { sensor: 1, celsius: 20 + ago / 60 }, { timestamp: now - minutes(ago) })
  // ...then sensor 2 comes back online and sends what it measured while offline (two hours ago).
  await readings.sendBatch(
    [130, 125, 120].map((ago) => ({ key: 2, value: { sensor: 2, celsius: 18 }, timestamp: now - minutes(ago) })),
  )

  // The first offset at or after "an hour ago", whatever came after it: the late readings too.
  await twain.resetGroup('dashboard', 'readings', { time: now - minutes(60) })
  const dashboard = twain.consumer<Reading, number>('readings', { group: 'dashboard' })
  const end = (await twain.describeTopic('readings')).offsets[0]!.end
  let replayed = 0
  let late = 0
  for await (const m of dashboard) {
    replayed++
    if (m.timestamp < now - minutes(60)) late++
    m.ack()
    if (m.offset === end - 1) break
  }
  await dashboard.close()
  console.log(`replayed ${replayed} readings from an hour ago on (${late} of them measured earlier, sent late)`)

  // A plain read by time answers the same way.
  const offsets: number[] = []
  for await (const m of twain.history<Reading>('readings', { from: { time: now - minutes(60) } }))
    offsets.push(m.offset)
  console.log(`history from an hour ago: offsets ${offsets.join(', ')}`)
  if (replayed !== 7 || late !== 3 || offsets.join() !== '6,7,8,9,10,11,12') process.exitCode = 1
} finally {
  await twain.close()
  rmSync(dir, { recursive: true, force: true })
}
