// A/B of the cross-process tail of two trees: `npx tsx bench/ab-tail.mts <repo root> <file|redis> [messages]`
// prints one JSON line ({ backend, p50, p99, max } in ms, and for file the raw fs.watch reader's p50 and the
// ratio): one round of bench/lib/tail.ts of that tree (a child sends one message every 3 ms with
// `producer.send`, this process receives them with `twain.tail()`), on a fresh temp root or a private
// redis-server started for the run. Alternate it between two checkouts in fresh processes, e.g.
//   for i in 1 2 3 4 5; do for r in /work/a /work/b; do (cd $r && npx tsx bench/ab-tail.mts $r redis); done; done
// and compare the medians (the machine's noise moves single rounds by ±30%).
const root = process.argv[2]
const backend = process.argv[3] ?? 'file'
const n = Number(process.argv[4] ?? 1000)
if (backend !== 'file' && backend !== 'redis')
  throw new Error(`backend must be file or redis, got ${JSON.stringify(backend)}`)
const { tailTwain, tailBaseline } = await import(`${root}/bench/lib/tail.ts`)
const { RedisServer } = await import(`${root}/test/helpers/redis-server.ts`)
const server = backend === 'redis' ? await RedisServer.start() : undefined
try {
  const t = (await tailTwain(n, server?.url, `${backend} tail`)).summary
  const out: Record<string, unknown> = {
    backend,
    p50: +t.p50.toFixed(3),
    p99: +t.p99.toFixed(3),
    max: +t.max.toFixed(2),
  }
  if (backend === 'file') {
    const raw = (await tailBaseline(n)).summary
    out.rawP50 = +raw.p50.toFixed(3)
    out.ratio = +(t.p50 / raw.p50).toFixed(2)
  }
  process.stdout.write(`${JSON.stringify(out)}\n`)
} finally {
  await server?.stop()
}
