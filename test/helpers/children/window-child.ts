// Window-chaos child: node --import tsx window-child.ts <target> <open options as JSON> [kind] [calm]
// A member of group 'win' (a processor of topic 'clicks' with the state store 'w', from the start)
// that counts each user's clicks by event time (the message's timestamp). Kinds: `tumbling`
// (default; 10-second windows, 1 s of lateness, an early result every 3 clicks of a window), `session` (150 ms gap, 2 s of lateness: a session
// click behind the watermark is late, and 2 s keep ±1 s of disorder in time), and their idle forms
// `tumbling-idle` (200 ms windows) and `session-idle` (150 ms gap), no lateness, `idleMs: 30`: an
// idle partition's windows close by the wall clock (timer turns). In the idle forms the child also
// kills itself with SIGKILL, after printing `# crash`, right after one in 60 of the store calls
// of its timer turns (a decision, results, the windows leaving the state) returns: the crash
// points a turn's order must survive (not with `calm`). Results go to 'counts', late clicks to 'late'. Prints
// (blocking writes) `# started <pid>`, `# working` after its first click counted, `# error …` for
// failures; SIGTERM: close, `# closed`, exit 0.
import { session, tumbling, windowed } from '../../../src/index.js'
import { TIMER_SEQ } from '../../../src/consumer/partitioned/state/timer-turn.js'
import { backendOf } from '../../../src/facade/twain.js'
import { lineNow as out } from './sync-out.js'
import { describeError as describe, statefulProcessor } from './stateful-processor.js'

const kind = process.argv[4] ?? 'tumbling'
const idle = kind.endsWith('-idle')
/** `calm`: no crashes at turns (the last child of a storm, which must close when told). */
const calm = process.argv[5] === 'calm'
const sessions = kind.startsWith('session')
const { twain, proc } = await statefulProcessor('clicks', 'win', 'w')

if (idle && !calm) {
  const store = backendOf(twain)
  const append = store.appendSourced.bind(store)
  store.appendSourced = async (...args: Parameters<typeof append>) => {
    const r = await append(...args)
    if (args[5].some((p) => p.seq >= TIMER_SEQ) && Math.random() < 1 / 60) {
      out('# crash')
      process.kill(process.pid, 'SIGKILL')
    }
    return r
  }
}

let added = 0
try {
  for await (const _ of windowed(proc, {
    window: sessions ? session(150) : tumbling(idle ? 200 : 10_000),
    latenessMs: idle ? 0 : sessions ? 2000 : 1000,
    ...(idle ? { idleMs: 30 } : {}),
    ...(kind === 'tumbling' ? { earlyEvery: 3 } : {}),
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
