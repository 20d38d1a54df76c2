// The Durable Streams reference server (@durable-streams/server) in its file-backed mode on
// loopback, for `npm run bench -- gateway`: prints `listening on <url>/v1/stream/` (as `twainmq
// serve` does) and stops on SIGTERM/SIGINT. Usage: reference-server.ts <dataDir>
import { DurableStreamTestServer } from '@durable-streams/server'

const dataDir = process.argv[2]
if (!dataDir) throw new Error('usage: reference-server.ts <dataDir>')
const server = new DurableStreamTestServer({
  host: '127.0.0.1',
  port: 0,
  dataDir, // file-backed: LMDB metadata + an append-only log per stream, fdatasync per append
  longPollTimeout: 30_000, // its default; also its SSE keep-alive interval
  compression: false, // byte-for-byte the same responses as ours (ours never compresses)
})
const url = await server.start()
process.stdout.write(`reference server listening on ${url}/v1/stream/\n`)
let stopping = false
const stop = () => {
  if (stopping) return
  stopping = true
  void server.stop().then(() => process.exit(0))
}
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
