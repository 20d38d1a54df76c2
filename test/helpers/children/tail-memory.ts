// Child: node --expose-gc --import tsx tail-memory.ts <file root | redis URL> <messages> <value bytes>
// Tails a new topic while sending it `messages` values one at a time, each waited for by the tail
// (so every message is its own read: a tail waiting on a quiet topic), and prints one JSON line:
// the heap and external memory after a full GC once a quarter had been received and at the end.
import { open } from '../../../src/index.js'

const [where, countText, sizeText] = process.argv.slice(2) as [string, string, string]
const gc = (globalThis as { gc?: () => void }).gc
if (!gc) throw new Error('run with --expose-gc')
const count = Number(countText)
const value = 'v'.repeat(Number(sizeText))
const twain = await open(where)
await twain.createTopic('mem')
const producer = twain.producer<string>('mem')
const ctrl = new AbortController()
let received = 0
let wake: (() => void) | undefined
const reading = (async () => {
  for await (const m of twain.tail<string>('mem', { signal: ctrl.signal })) {
    if (m.value.length !== value.length)
      throw new Error(`message ${m.offset}: ${m.value.length} characters, sent ${value.length}`)
    received++
    wake?.()
  }
})().catch((e: unknown) => {
  if (!ctrl.signal.aborted) throw e
})
const used = (): number => {
  gc()
  gc()
  const m = process.memoryUsage()
  return m.heapUsed + m.external
}
let quarter = 0
for (let i = 0; i < count; i++) {
  const seen = new Promise<void>((resolve) => (wake = resolve))
  await producer.send(i, value)
  if (received <= i) await seen
  if (i + 1 === count / 4) quarter = used()
}
const end = used()
ctrl.abort()
await reading
await producer.close()
await twain.close()
console.log(JSON.stringify({ received, quarter, end }))
