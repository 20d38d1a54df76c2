// How long a reader in another process takes to notice an append, measured from the write itself:
// `npx tsx bench/wake.mts <raw|twain> [spinMicros] [messages]` prints one JSON line with the p50 of
// write → the reader's first fs.watch callback (and, for twain, write → the message out of
// `twain.tail()`). A child appends one record every 3 ms (raw: `fs.writeSync` of a line; twain:
// `producer.send`, the wall time of each segment write recorded by wrapping `fs.writeSync`); with
// `spinMicros` the raw writer keeps its CPU busy that long after each write, as a library's work
// after the write syscall does. On these 2-vCPU machines the woken reader mostly waits for the
// writer's CPU: write → callback 0.02 ms at spin 0, 0.1 ms at spin 60 (bench/history/2026-12-02.md, "Where the file tail's time goes").
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import { syncBuiltinESMExports } from 'node:module'
import { fileURLToPath } from 'node:url'

const wall = () => performance.timeOrigin + performance.now()
const times: number[] = []
const [mode = 'raw', spinText = '0', countText = '800', role, root] = process.argv.slice(2)
if (mode !== 'raw' && mode !== 'twain') throw new Error(`mode must be raw or twain, got ${JSON.stringify(mode)}`)
const spin = Number(spinText)
const count = Number(countText)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

if (role === 'child') {
  const dir = root as string
  const writeSync = fs.writeSync
  ;(fs as { writeSync: unknown }).writeSync = (...a: Parameters<typeof fs.writeSync>) => {
    const n = writeSync(...a)
    times.push(wall())
    return n
  }
  syncBuiltinESMExports()
  let produce: (i: number) => Promise<unknown>
  let close = async () => {}
  if (mode === 'raw') {
    const fd = fs.openSync(`${dir}/lines.log`, 'a')
    produce = async () => {
      fs.writeSync(fd, `${wall()}\n`)
      const t = performance.now()
      while (performance.now() - t < spin / 1000);
    }
  } else {
    const { open } = await import('../src/index.js')
    const twain = await open(dir)
    const p = twain.producer<string>('tail')
    await p.send(0, 'warm-up')
    times.length = 0
    produce = (i) => p.send(i, String(wall()))
    close = () => twain.close()
  }
  await sleep(500)
  for (let i = 0; i < count; i++) {
    await produce(i)
    await sleep(3)
  }
  await close()
  fs.writeFileSync(`${dir}/writes.json`, JSON.stringify(times))
} else {
  const watch = fs.watch
  ;(fs as { watch: unknown }).watch = (
    path: fs.PathLike,
    options: fs.WatchOptions,
    listener: fs.WatchListener<string>,
  ) =>
    watch(path, options, (...a) => {
      times.push(wall())
      listener(...a)
    })
  syncBuiltinESMExports()
  const dir = fs.mkdtempSync('/tmp/twainmq-wake-')
  const delivered: number[] = []
  let stop: () => Promise<void>
  let done: Promise<void>
  if (mode === 'raw') {
    fs.writeFileSync(`${dir}/lines.log`, '')
    const { plainTail } = await import('./baselines/plain-tail.js')
    const t = await plainTail(`${dir}/lines.log`, count)
    ;({ done, stop } = t)
  } else {
    const { open } = await import('../src/index.js')
    const twain = await open(dir)
    await twain.createTopic('tail', { keyType: 'u32' })
    const stream = twain.tail<string>('tail')
    done = (async () => {
      for await (const m of stream) {
        const now = wall()
        if (m.value === 'warm-up') continue
        delivered.push(now)
        if (delivered.length >= count) break
      }
    })()
    stop = async () => {
      await stream.close()
      await twain.close()
    }
  }
  const child = spawn(
    process.execPath,
    [...process.execArgv, fileURLToPath(import.meta.url), mode, spinText, countText, 'child', dir],
    { stdio: 'inherit' },
  )
  const exited = new Promise((r) => child.on('exit', r))
  await done
  await exited
  await stop()
  const writes = JSON.parse(fs.readFileSync(`${dir}/writes.json`, 'utf8')) as number[]
  const after = (list: number[], w: number) => list.find((x) => x > w)
  const p50 = (a: number[]) => +(a.sort((x, y) => x - y)[a.length >> 1] ?? NaN).toFixed(3)
  const toEvent: number[] = []
  const toDelivered: number[] = []
  for (const w of writes.slice(20)) {
    const e = after(times, w)
    if (e !== undefined) toEvent.push(e - w)
    const d = after(delivered, w)
    if (d !== undefined) toDelivered.push(d - w)
  }
  const out: Record<string, unknown> = { mode, spinMicros: spin, writeToEventP50: p50(toEvent) }
  if (mode === 'twain') out.writeToDeliveredP50 = p50(toDelivered)
  process.stdout.write(`${JSON.stringify(out)}\n`)
  fs.rmSync(dir, { recursive: true })
}
