// Window-chaos child: node --import tsx window-child.ts <target> <open options as JSON> [tumbling|session]
// A member of group 'win' (a processor of topic 'clicks' with the state store 'w', from the start)
// that counts each user's clicks by event time (the message's timestamp): in 10-second tumbling
// windows with 1 s of lateness (default), or in sessions with a 150 ms gap and 2 s of lateness
// (a session click behind the watermark is late: 2 s keep ±1 s of disorder in time). Results go to
// 'counts', late clicks to 'late'. Prints (blocking writes) `# started <pid>`, `# working` after
// its first click counted, `# error …` for failures; SIGTERM: close, `# closed`, exit 0.
import { session, tumbling, windowed } from '../../../src/index.js'
import { lineNow as out } from './sync-out.js'
import { describeError as describe, statefulProcessor } from './stateful-processor.js'

const kind = process.argv[4] ?? 'tumbling'
const { proc } = await statefulProcessor('clicks', 'win', 'w')

let added = 0
try {
  for await (const _ of windowed(proc, {
    window: kind === 'session' ? session(150) : tumbling(10_000),
    latenessMs: kind === 'session' ? 2000 : 1000,
    to: 'counts',
    lateTo: 'late',
    initial: () => 0,
    add: (n) => {
      if (added++ === 0) out('# working')
      return n + 1
    },
    merge: (a, b) => a + b,
  })) {
    // The results are in 'counts': the test reads them there.
  }
} catch (e) {
  out(`# error loop ${describe(e)}`)
}
