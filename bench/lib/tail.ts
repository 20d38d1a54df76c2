/**
 * Cross-process tail latency, shared by the file and peers suites: a child process sends one
 * message every ~3 ms with its wall-clock time in the value, this process receives it and records
 * (its wall clock − that). The first `TAIL_WARMUP` are sent but not counted.
 *
 *   tailBaseline  child appends lines to a file; fs.watch + fs.read here (bench/baselines/plain-tail.ts)
 *   tailTwain     child: producer.send (bench/children/twain-send.ts); here: twain.tail(topic)
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { open } from '../../src/index.js'
import { within } from '../../test/helpers/wait.js'
import { plainTail } from '../baselines/plain-tail.js'
import { spawnBenchChild, type BenchChild } from './child.js'
import { progress } from './progress.js'
import { sleep, summarise, machineNow, type LatencySummary } from './stats.js'
import { makeTempDir, removeTempDir } from './tmp.js'

export const TAIL_INTERVAL_MS = 3
/** Tail messages sent first and not counted (connection/JIT warm-up on both sides). */
export const TAIL_WARMUP = 10
/** Time the parent's tail gets to set up its watchers before the child starts sending. */
export const TAIL_SETTLE_MS = 300

export interface TailResult {
  label: string
  sent: number
  received: number
  summary: LatencySummary
}

export async function stopChild(child: BenchChild): Promise<void> {
  const code = await Promise.race([child.exited, sleep(5000).then(() => 'timeout' as const)])
  if (code === 'timeout') child.kill()
  else if (code !== 0) throw new Error(`tail child exited with ${code}`)
}

/**
 * Run one cross-process tail: `child` (already started) says ready, `receive` starts this side's
 * reader and resolves once it has `total` latencies (pushed into the array it is given).
 */
export async function tailAcross(
  label: string,
  child: BenchChild,
  total: number,
  receive: (latencies: number[]) => { done: Promise<void>; stop: () => Promise<void> },
): Promise<TailResult> {
  await child.next('ready')
  const latencies: number[] = []
  const r = receive(latencies)
  await sleep(TAIL_SETTLE_MS)
  child.go()
  const bar = progress(label, total)
  const tick = setInterval(() => bar.update(latencies.length), 100)
  try {
    await within(r.done, total * TAIL_INTERVAL_MS * 4 + 20_000, label)
  } finally {
    clearInterval(tick)
    bar.stop()
    await r.stop()
  }
  await stopChild(child)
  return { label, sent: total, received: latencies.length, summary: summarise(latencies.slice(TAIL_WARMUP)) }
}

export async function tailBaseline(count: number, label = 'baseline: fs.watch + fs.read'): Promise<TailResult> {
  const dir = makeTempDir('tail-plain')
  try {
    const file = join(dir, 'lines.log')
    writeFileSync(file, '')
    const total = count + TAIL_WARMUP
    const child = spawnBenchChild('plain-append.ts', [file, String(total), String(TAIL_INTERVAL_MS)])
    await child.next('ready')
    const tail = await plainTail(file, total)
    await sleep(TAIL_SETTLE_MS)
    child.go()
    const bar = progress('e. baseline tail (fs.watch + fs.read)', total)
    const tick = setInterval(() => bar.update(tail.latencies.length), 100)
    try {
      await within(tail.done, total * TAIL_INTERVAL_MS * 4 + 20_000, 'baseline tail')
    } finally {
      clearInterval(tick)
      bar.stop()
      await tail.stop()
    }
    await stopChild(child)
    const lat = tail.latencies.slice(TAIL_WARMUP)
    return { label, sent: total, received: tail.latencies.length, summary: summarise(lat) }
  } finally {
    removeTempDir(dir)
  }
}

/**
 * twain.tail() here, producer.send in a child. `url` undefined: a new temp file root; else a Redis
 * URL (the topic gets a unique name so rounds do not see each other's messages).
 */
export async function tailTwain(count: number, url?: string, label = 'twain.tail(topic)'): Promise<TailResult> {
  const root = url ?? makeTempDir('tail')
  const twain = await open(root)
  const topic = url === undefined ? 'tail' : `tail-${process.pid}-${Date.now()}`
  try {
    await twain.createTopic(topic, { keyType: 'u32' })
    const total = count + TAIL_WARMUP
    const child = spawnBenchChild('twain-send.ts', [root, topic, String(total), String(TAIL_INTERVAL_MS)])
    return await tailAcross(label, child, total, (latencies) => {
      const stream = twain.tail<string>(topic)
      const done = (async () => {
        for await (const m of stream) {
          const now = machineNow()
          const sent = Number(m.value)
          if (!Number.isFinite(sent)) continue
          latencies.push(now - sent)
          if (latencies.length >= total) break
        }
      })()
      return { done, stop: async () => void (await stream.close()) }
    })
  } finally {
    if (url !== undefined) await twain.deleteTopic(topic).catch(() => undefined)
    await twain.close()
    if (url === undefined) removeTempDir(root)
  }
}

/** Print a tail run's result line (p50 / p99 / max). */
export function logTail(t: TailResult): TailResult {
  const s = t.summary
  process.stdout.write(
    `  ${t.label.padEnd(44)} p50 ${s.p50.toFixed(3)} ms  p99 ${s.p99.toFixed(3)} ms  max ${s.max.toFixed(2)} ms\n`,
  )
  return t
}
