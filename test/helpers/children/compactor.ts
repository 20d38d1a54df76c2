// Compaction runner: node --import tsx compactor.ts <redis url> <prefix> <topic> <step>
// Runs compaction passes of a compacted topic one after another with `step` entries per script call,
// printing `# started` first and `pass <records after>` after each (blocking writes: sync-out.ts).
// A test kills it with SIGKILL in the middle of a pass.
import { RedisBackend } from '../../../src/backends/redis/redis-backend.js'
import { flushLines as flush, line as out } from './sync-out.js'

const [url, prefix, topic, step] = process.argv.slice(2) as [string, string, string, string]

const store = await RedisBackend.connect(
  { url, cluster: false },
  { prefix, clientId: 'compactor', compactEveryMs: 3_600_000, compactStep: Number(step) },
)
out('# started')
flush()
for (;;) {
  const stats = await store.compact(topic)
  out(`pass ${stats.after.records}`)
  flush()
}
