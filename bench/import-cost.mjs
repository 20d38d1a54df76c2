#!/usr/bin/env node
// Import cost of twainmq's main entry: `node bench/import-cost.mjs <dist/index.js> [<other dist/index.js> …] [--repeat n]`.
// Each round imports each entry in a fresh process (alternating, so load affects all alike) and
// reports per entry the median wall time of `await import()`, the CommonJS modules loaded and
// whether ioredis was among them.
import { spawnSync } from 'node:child_process'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'

const args = process.argv.slice(2)
const r = args.indexOf('--repeat')
const repeat = r >= 0 ? Number(args.splice(r, 2)[1]) : 9
const entries = args.map((a) => pathToFileURL(resolve(a)).href)
if (entries.length === 0) {
  console.error('usage: node bench/import-cost.mjs <dist/index.js> [...] [--repeat n]')
  process.exit(2)
}
const probe = `
const t0 = performance.now(); await import(process.argv[1]); const ms = performance.now() - t0
const cache = Object.keys((await import('node:module')).createRequire(import.meta.url).cache)
console.log(JSON.stringify({ ms, cjs: cache.length, ioredis: cache.some((p) => p.includes('/ioredis/')) }))`
const runs = entries.map(() => [])
for (let i = 0; i < repeat; i++) {
  entries.forEach((e, k) => {
    const out = spawnSync(process.execPath, ['--input-type=module', '-e', probe, e], { encoding: 'utf8' })
    if (out.status !== 0) throw new Error(out.stderr)
    runs[k].push(JSON.parse(out.stdout))
  })
}
entries.forEach((e, k) => {
  const ms = runs[k].map((x) => x.ms).sort((a, b) => a - b)
  const last = runs[k].at(-1)
  console.log(
    `${args[k]}: median ${ms[Math.floor(ms.length / 2)].toFixed(0)} ms (min ${ms[0].toFixed(0)}), ${last.cjs} CommonJS modules, ioredis ${last.ioredis ? 'loaded' : 'not loaded'}`,
  )
})
