// Graceful shutdown of a consumer on SIGTERM: stop taking new messages, finish and ack the ones in
// hand, commit, leave the group — then the process exits by itself.
// Run: npx tsx examples/graceful-shutdown.ts   (it sends itself SIGTERM after 50 messages)
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { open } from 'twainmq'

const dir = mkdtempSync(join(tmpdir(), 'twainmq-shutdown-'))
const twain = await open(dir)
await twain.createTopic('emails', { partitions: 2, keyType: 'string' })
await twain
  .producer<{ to: string }>('emails')
  .sendBatch(Array.from({ length: 200 }, (_, i) => ({ key: `user-${i % 7}`, value: { to: `user-${i}@example.com` } })))

const consumer = twain.consumer<{ to: string }>('emails', { group: 'mailer', commitIntervalMs: 200 })

// On SIGTERM: close() ends every iteration, waits for in-flight messages to be acked (up to
// drainTimeoutMs), commits and leaves the group.
process.once('SIGTERM', () => {
  console.log('SIGTERM: draining…')
  void consumer.close()
})

let sent = 0
for await (const email of consumer) {
  await new Promise((r) => setTimeout(r, 2)) // "send" the email
  email.ack()
  if (++sent === 50) process.kill(process.pid, 'SIGTERM')
}
await consumer.close() // the loop ends as soon as closing starts; wait for the commit and the leave

const g = await twain.describeGroup('mailer')
const committed = g.topics.reduce((n, t) => n + t.committed, 0)
console.log(`sent ${sent} emails; committed ${committed}; members left in the group: ${g.members.length}`)
await twain.close()
rmSync(dir, { recursive: true, force: true })
