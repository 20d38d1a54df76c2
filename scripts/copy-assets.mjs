// Build step after tsc: copy files tsc does not emit (the Redis backend's Lua scripts) from src/ to dist/.
import { cpSync, existsSync, mkdirSync, readdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const ASSETS = [{ from: 'src/backends/redis/scripts', to: 'dist/backends/redis/scripts', ext: '.lua' }]

for (const a of ASSETS) {
  const src = join(root, a.from)
  if (!existsSync(src)) throw new Error(`copy-assets: ${a.from} is missing`)
  mkdirSync(join(root, a.to), { recursive: true })
  let n = 0
  for (const f of readdirSync(src)) {
    if (!f.endsWith(a.ext)) continue
    cpSync(join(src, f), join(root, a.to, f))
    n++
  }
  console.log(`copy-assets: ${n} ${a.ext} file(s) → ${a.to}`)
}
