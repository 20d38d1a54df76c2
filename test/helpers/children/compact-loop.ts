// Compaction passes until killed: node --import tsx compact-loop.ts <dir> <topic>
// Opens the file store (1 KiB segments) and runs `compact(topic)` over and over, printing
// `# started` once open and `# pass <n>` after each pass (blocking writes: sync-out.ts).
import { FileBackend } from '../../../src/backends/file/file-backend.js'
import { flushLines as flush, line as out } from './sync-out.js'

const [dir, topic] = process.argv.slice(2) as [string, string]
const store = new FileBackend(dir, { segmentBytes: 1024 })
await store.init()
out('# started')
flush()
for (let n = 1; ; n++) {
  await store.compact(topic)
  out(`# pass ${n}`)
  flush()
}
