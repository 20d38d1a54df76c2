// Page views counted per user in a processor's state store, exactly once: each view adds one to its
// user's count in `m.state` and sends the running count to a topic. The first processor stops
// part-way without committing (as a crash would leave it); the next one restores the counts from
// the store's changelog topic and goes on after the last view the changelog holds, so no view is
// counted twice or missed, although the group's commit lagged. A reset of the group to the start
// with its state store named clears the state too, and the replay counts the same again.
// Run: npx tsx examples/state-counts.ts
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { open, type Processor } from 'twainmq'

const VIEWS = 400
const users = ['ada', 'bob', 'cy', 'dee']

const dir = mkdtempSync(join(tmpdir(), 'twainmq-state-'))
const twain = await open(dir)
await twain.createTopic('views', { partitions: 2, keyType: 'string' })
await twain.createTopic('view-counts', { partitions: 2, keyType: 'string' })
await twain
  .producer<string, string>('views')
  .sendBatch(Array.from({ length: VIEWS }, (_, i) => ({ key: users[i % users.length] as string, value: `/p/${i}` })))

const options = { group: 'counter', state: 'views-per-user', commitIntervalMs: 60_000 }

/** Count views until `done(latest count of each user seen)`, sending each running count. */
async function count(p: Processor<string, string>, done: (seen: Map<string, number>) => boolean): Promise<void> {
  const seen = new Map<string, number>()
  for await (const m of p) {
    const views = (m.state.get<number>(m.key) ?? 0) + 1 // the count of the views before this one
    m.state.set(m.key, views) // stored in the changelog with the output, when the view is acked
    void m.send('view-counts', m.key, views)
    m.ack()
    seen.set(m.key, views)
    if (done(seen)) break
  }
}

// The first processor counts until ada has 60 views, then its process "dies": its store is closed
// under it, so it neither commits nor leaves the group.
const other = await open(dir)
const first = other.processor<string, string>('views', options)
await count(first, (seen) => seen.get('ada') === 60)
const before = await twain.describeGroup('counter')
console.log(`first run: ada at 60 views; the group committed ${before.topics.reduce((n, t) => n + t.committed, 0)}`)
await other.close()

// The next processor restores the counts and counts the rest: until every user has all views.
const second = twain.processor<string, string>('views', { ...options, sessionTimeoutMs: 3000 })
let resumedAt = 0
await count(second, (seen) => {
  resumedAt ||= Math.max(...seen.values()) // the first view it counted counts on from the changelog
  return users.every((u) => seen.get(u) === VIEWS / users.length)
})
await second.close()
console.log(`second run: went on from the restored counts (its first view counted ${resumedAt > 1 ? 'past 1' : '1'})`)

const totals = new Map<string, number>()
for await (const m of twain.history<number, string>('counter-views-per-user-changelog')) totals.set(m.key, m.value)
console.log(`changelog: ${[...totals].map(([u, n]) => `${u} ${n}`).join(', ')}`)
let outputs = 0
for await (const _ of twain.history('view-counts')) outputs++
console.log(`view-counts: ${outputs} records for ${VIEWS} views`)

// Replay: a reset of the group to the start (no member running) that names its state store clears
// it too, so a processor counts every view again from zero and ends with the same counts.
await twain.resetGroup('counter', 'views', 'start', { state: 'views-per-user' })
const replay = twain.processor<string, string>('views', options)
let final = new Map<string, number>()
await count(replay, (seen) => {
  final = seen
  return users.every((u) => seen.get(u) === VIEWS / users.length)
})
await replay.close()
console.log(`replay after a reset to the start: ${[...final].map(([u, n]) => `${u} ${n}`).join(', ')}`)
await twain.close()
rmSync(dir, { recursive: true, force: true })
