// Child: a very wide topic end to end, for test/integration/file/wide-topic.test.ts (run under `ulimit -n`).
//   node --import tsx wide-topic.ts <dir> <partitions> [optionsJSON]
// Options: maxOpenFiles (passed to open), phases (default 'produce,history,tail,group'), reopen
// (a fresh instance per phase: lets an old tree that keeps every fd open still be measured), group
// (name of the consumer group, default 'wide-group': another one re-reads a topic already consumed).
// Prints `# <phase> <ms>` lines as phases end and finally one line `RESULT <json>` with ok, error,
// firstDeliveryMs (consumer created → first message), maxFds (entries of /proc/self/fd, sampled
// every few ms and inside the read loops), maxRssMiB and per-phase times. Exits 0 when ok.
import { readdirSync } from 'node:fs'
import { open, type Twain } from '../../../src/index.js'

const [dir, countText, optsText] = process.argv.slice(2) as [string, string, string | undefined]
const partitions = Number(countText)
const opts = JSON.parse(optsText ?? '{}') as {
  maxOpenFiles?: number
  phases?: string
  reopen?: boolean
  group?: string
}
const phases = (opts.phases ?? 'produce,history,tail,group').split(',')
const out = (line: string) => process.stdout.write(line + '\n')

let maxFds = 0
let maxRss = 0
const sample = () => {
  try {
    maxFds = Math.max(maxFds, readdirSync('/proc/self/fd').length)
    maxRss = Math.max(maxRss, process.memoryUsage.rss())
  } catch {
    /* not Linux, or out of fds (EMFILE: the result reports what failed) */
  }
}
const sampler = setInterval(sample, 5)
const result: Record<string, unknown> = { partitions }
const topic = 'wide'

/** Every partition 0..n-1 seen exactly once (one message each was sent). */
function checkAll(seen: Uint8Array, what: string): void {
  const missing = seen.indexOf(0)
  if (missing >= 0) throw new Error(`${what}: partition ${missing} missing`)
}

async function timed(name: string, fn: () => Promise<void>): Promise<void> {
  const t0 = performance.now()
  await fn()
  const ms = Math.round(performance.now() - t0)
  result[`${name}Ms`] = ms
  sample()
  out(`# ${name} ${ms} fds ${maxFds}`)
}

let twain: Twain = await open(dir, { maxOpenFiles: opts.maxOpenFiles })
const fresh = async () => {
  if (!opts.reopen) return
  await twain.close()
  twain = await open(dir, { maxOpenFiles: opts.maxOpenFiles })
}

try {
  if (phases.includes('produce')) {
    await timed('produce', async () => {
      await twain.createTopic(topic, { partitions, keyType: 'u32' })
      const p = twain.producer<string>(topic)
      await p.sendBatch(Array.from({ length: partitions }, (_, i) => ({ key: i, value: `m${i}`, partition: i })))
      await p.close()
    })
    await fresh()
  }
  if (phases.includes('history')) {
    await timed('history', async () => {
      const seen = new Uint8Array(partitions)
      let n = 0
      for await (const m of twain.history(topic)) {
        seen[m.partition] = 1
        if (++n % 256 === 0) sample()
      }
      if (n !== partitions) throw new Error(`history: ${n} messages, expected ${partitions}`)
      checkAll(seen, 'history')
    })
    await fresh()
  }
  if (phases.includes('tail')) {
    await timed('tail', async () => {
      const seen = new Uint8Array(partitions)
      let n = 0
      for await (const m of twain.tail(topic, { from: 'start' })) {
        seen[m.partition] = 1
        if (++n % 256 === 0) sample()
        if (n === partitions) break
      }
      checkAll(seen, 'tail')
    })
    await fresh()
  }
  if (phases.includes('group')) {
    await timed('group', async () => {
      const seen = new Uint8Array(partitions)
      let n = 0
      const t0 = performance.now()
      const c = twain.consumer<string>(topic, { group: opts.group ?? 'wide-group', from: 'start' })
      for await (const m of c) {
        if (n === 0) {
          result.firstDeliveryMs = Math.round(performance.now() - t0)
          out(`# first-delivery ${result.firstDeliveryMs}`)
        }
        seen[m.partition] = 1
        m.ack()
        if (++n % 256 === 0) sample()
        if (n === partitions) break
      }
      await c.close()
      checkAll(seen, 'group')
    })
  }
  await twain.close()
  result.ok = true
} catch (e) {
  result.ok = false
  result.error = `${(e as Error).name}: ${(e as Error).message}`
}
clearInterval(sampler)
sample()
result.maxFds = maxFds
result.maxRssMiB = Math.round(maxRss / 1048576)
out(`RESULT ${JSON.stringify(result)}`)
process.exit(result.ok ? 0 : 1)
