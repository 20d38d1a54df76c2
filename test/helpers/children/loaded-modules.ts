// Child: node --import tsx loaded-modules.ts <target>
// Opens <target>, creates a topic, sends and reads one message, closes, and prints one JSON line:
// whether ioredis (a CommonJS package) was loaded into this process, how many CJS modules were, and
// how many of rxjs's (its index, which loads every operator, must not be among them).
import { createRequire } from 'node:module'
import { open } from '../../../src/index.js'

const target = process.argv[2] as string
const twain = await open(target, target.startsWith('redis') ? { prefix: `lm${process.pid}:` } : {})
await twain.createTopic('t')
await twain.producer<string>('t').send(1, 'x')
for await (const m of twain.history<string>('t')) if (m.value !== 'x') throw new Error(`read ${m.value}`)
await twain.deleteTopic('t')
await twain.close()
const cache = Object.keys(createRequire(import.meta.url).cache)
process.stdout.write(
  JSON.stringify({
    ioredis: cache.some((p) => p.includes('/node_modules/ioredis/')),
    cjs: cache.length,
    rxjsIndex: cache.some((p) => p.endsWith('/rxjs/dist/cjs/index.js')),
    rxjs: cache.filter((p) => p.includes('/node_modules/rxjs/')).length,
  }) + '\n',
)
