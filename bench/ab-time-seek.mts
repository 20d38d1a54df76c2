// A/B of file time seeks between two source trees (issue 15): writes N (env N, default 1,000,000)
// 100-byte values in sendBatch calls of 1,000 to one partition, then times 20 seeks to random times
// within the log (offsetForTime through the backend, after a `sync`; env SEEKS for more) and prints
// the median and max wall ms and the median CPU ms per seek. With FRESH=1 the seeks run in a fresh
// process (the writer's heap and its garbage collector then weigh on no seek); WARMUP seeks to other
// random times go first, uncounted (e.g. FRESH=1 WARMUP=50 SEEKS=200 for the steady state).
// usage: npx tsx bench/ab-time-seek.mts <tree>   (alternate trees in fresh processes)
const [tree] = process.argv.slice(2) as [string]
const { FileBackend } = await import(`${tree}/src/backends/file/file-backend.ts`)
const { mkdtempSync, rmSync } = await import('node:fs')
const { execFileSync, execSync } = await import('node:child_process')
const N = Number(process.env.N ?? 1_000_000)

/** Write the log; its directory and the first and last send times. */
async function write(): Promise<{ dir: string; first: number; last: number }> {
  const { open } = await import(`${tree}/src/index.ts`)
  const dir = mkdtempSync('/tmp/ab-time-')
  const twain = await open(dir)
  await twain.createTopic('t', { partitions: 1, keyType: 'u32' })
  const p = twain.producer('t')
  const v = 'x'.repeat(100)
  const first = Date.now()
  for (let i = 0; i < N; i += 1000)
    await p.sendBatch(Array.from({ length: 1000 }, (_, j) => ({ key: i + j, value: v })))
  await p.flush()
  const last = Date.now()
  await twain.close()
  // Let the kernel write the log back first: at 10M (1.2 GB) the writeback of what was just written
  // otherwise runs through the seeks and swamps them (5-9 ms on either tree, against ~1 ms after it).
  execSync('sync')
  return { dir, first, last }
}

async function seeks(dir: string, first: number, last: number): Promise<string> {
  const b = new FileBackend(dir, {})
  await b.init()
  const SEEKS = Number(process.env.SEEKS ?? 20)
  const ms: number[] = []
  const cpu: number[] = [] // user + system CPU of this process per seek: less noisy than wall time on a shared machine
  let seed = 7
  const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31
  for (let i = 0; i < Number(process.env.WARMUP ?? 0); i++)
    await b.offsetForTime('t', 0, first + Math.floor(rnd() * (last - first)))
  for (let i = 0; i < SEEKS; i++) {
    const time = first + Math.floor(rnd() * (last - first))
    const c0 = process.cpuUsage()
    const t0 = performance.now()
    await b.offsetForTime('t', 0, time)
    ms.push(performance.now() - t0)
    const c = process.cpuUsage(c0)
    cpu.push((c.user + c.system) / 1000)
  }
  await b.close()
  const median = (xs: number[]) => +([...xs].sort((a, c) => a - c)[xs.length >> 1] as number).toFixed(2)
  const fresh = process.env.SEEK_IN !== undefined
  return JSON.stringify({
    tree: tree.split('/').pop(),
    n: N,
    ...(fresh ? { fresh } : {}),
    medianMs: median(ms),
    maxMs: +Math.max(...ms).toFixed(2),
    cpuMs: median(cpu),
  })
}

const at = process.env.SEEK_IN // set for the fresh process: "<dir> <first> <last>"
if (at) {
  const [dir, first, last] = at.split(' ') as [string, string, string]
  console.log(await seeks(dir, Number(first), Number(last)))
} else {
  const { dir, first, last } = await write()
  const env = { ...process.env, SEEK_IN: `${dir} ${first} ${last}` }
  const child = () =>
    execFileSync(process.execPath, [...process.execArgv, process.argv[1] as string, tree], { env })
      .toString()
      .trim()
  console.log(process.env.FRESH === '1' ? child() : await seeks(dir, first, last))
  rmSync(dir, { recursive: true })
}
