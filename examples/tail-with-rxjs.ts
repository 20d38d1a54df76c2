// A tail as an RxJS Observable: filter, map, bufferCount, take — unsubscribing (take) releases the tail.
// Run: npx tsx examples/tail-with-rxjs.ts
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bufferCount, filter, from, lastValueFrom, map, take, toArray } from 'rxjs'
import { open, type Message } from 'twainmq'

type Reading = { sensor: string; celsius: number }
const dir = mkdtempSync(join(tmpdir(), 'twainmq-rx-'))
const twain = await open(dir)
await twain.createTopic('readings', { keyType: 'u16', partitions: 2 })

// from(stream) uses twainmq's own Observable bridge (the stream is an interop Observable).
const hot$ = from(twain.tail<Reading>('readings')).pipe(
  filter((m: Message<Reading>) => m.value.celsius > 30),
  map((m) => `${m.value.sensor}: ${m.value.celsius}°C (partition ${m.partition}, offset ${m.offset})`),
  bufferCount(2),
  take(2), // after two pairs the subscription ends and the tail's watchers are released
  toArray(),
)
const result = lastValueFrom(hot$)

const producer = twain.producer<Reading>('readings')
for (let i = 0; i < 20; i++) {
  await producer.send(i % 5, { sensor: `s${i % 5}`, celsius: 20 + ((i * 7) % 17) })
}
for (const pair of await result) console.log('hot pair:', pair.join(' | '))

// asObservable() gives the same bridge explicitly; history completes by itself.
const count = await lastValueFrom(twain.history('readings').asObservable().pipe(toArray()))
console.log(`history has ${count.length} readings`)

await twain.close()
rmSync(dir, { recursive: true, force: true })
