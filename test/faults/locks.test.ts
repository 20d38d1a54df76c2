// Fault tests: lock files left behind in every shape a crash (or a stranger) can leave them.
//
// The append lock of partition p of topic t is `<root>/t/<p>.lock`; a group's lock is
// `<root>/__groups/<group>.lock`. Specified behaviour: an EMPTY lock file, a GARBAGE one, and a
// FOREIGN one (a dead pid; pid 1, alive but not twainmq), each with an mtime 60 s in the past, never
// wedge: a send resolves within 5 s, a consumer commits and closes within 5 s. A fresh empty lock
// (mtime now) does not wedge either: a send resolves within 10 s.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { existsSync, mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { open, type GroupMessage, type Twain } from '../../src/index.js'
import { CLEAN, check, readBack } from '../helpers/checker.js'
import { describeErr, within } from '../helpers/faults.js'
import { tempDir } from '../helpers/tmp.js'

const DEAD_PID = 999999

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'
  }
}

const kinds: Array<{ name: string; content: () => string }> = [
  { name: 'an EMPTY lock file', content: () => '' },
  { name: 'a GARBAGE lock file ("hello world")', content: () => 'hello world' },
  { name: `a FOREIGN lock naming a dead pid (${DEAD_PID})`, content: () => `${DEAD_PID} deadbeef 1700000000000` },
  { name: 'a FOREIGN lock naming pid 1 (alive, not twainmq)', content: () => '1 deadbeef 1700000000000' },
]

/** Write a lock file with the given content and set its mtime `ageMs` in the past. */
function plant(path: string, content: string, ageMs: number): void {
  writeFileSync(path, content)
  const t = new Date(Date.now() - ageMs)
  utimesSync(path, t, t)
}

let tmp: ReturnType<typeof tempDir>
let twain: Twain
let lockPath: string | undefined

beforeEach(async () => {
  expect(pidAlive(DEAD_PID), `pid ${DEAD_PID} must not exist for these tests`).toBe(false)
  expect(pidAlive(1), 'pid 1 must exist for these tests').toBe(true)
  tmp = tempDir('twainmq-faults-locks-')
  twain = await open(tmp.dir, { pollMs: 50 })
  await twain.createTopic('t')
})
afterEach(async () => {
  // A wedged writer waits for the planted lock: remove it so close() can finish.
  if (lockPath) rmSync(lockPath, { force: true })
  lockPath = undefined
  await within(twain.close(), 35_000, 'twain.close()').catch(() => undefined)
  tmp.remove()
})

async function sendThrough(path: string, content: string, ms: number): Promise<void> {
  lockPath = path
  const started = Date.now()
  const r = await within(
    twain.producer<string>('t').send(1, 'through'),
    ms,
    `send past ${JSON.stringify(content)} lock`,
  ).catch((e: unknown) => e)
  const took = Date.now() - started
  expect(r, `send did not get past the lock ${JSON.stringify(content)} within ${ms} ms: ${describeErr(r)}`).toEqual({
    partition: 0,
    offset: 0,
  })
  // The send really went through the planted lock: it is gone (or is a new holder's).
  const now = existsSync(path) ? readFileSync(path, 'utf8') : undefined
  expect(now === undefined || now !== content, `planted lock still there: ${JSON.stringify(now)}`).toBe(true)
  const report = check([{ id: 'through', partition: 0, offset: 0 }], await readBack(twain, 't'))
  expect(report.counts, report.text).toEqual(CLEAN)
  expect(took).toBeLessThan(ms)
}

describe('partition append lock <root>/t/0.lock left behind', () => {
  for (const k of kinds) {
    it(`${k.name}, 60 s old: a send resolves within 5 s`, async () => {
      const path = join(tmp.dir, 't', '0.lock')
      plant(path, k.content(), 60_000)
      await sendThrough(path, k.content(), 5_000)
    }, 60_000)
  }

  it('a FRESH empty lock file (mtime now): a send resolves within 10 s', async () => {
    const path = join(tmp.dir, 't', '0.lock')
    plant(path, '', 0)
    await sendThrough(path, '', 10_000)
  }, 60_000)
})

describe('group lock <root>/__groups/g.lock left behind', () => {
  for (const k of kinds) {
    it(`${k.name}, 60 s old: a consumer consumes, commits and closes within 5 s`, async () => {
      await twain.producer<string>('t').sendBatch(Array.from({ length: 5 }, (_, i) => ({ key: i, value: `m${i}` })))
      mkdirSync(join(tmp.dir, '__groups'), { recursive: true })
      const path = join(tmp.dir, '__groups', 'g.lock')
      lockPath = path
      plant(path, k.content(), 60_000)

      const deadline = Date.now() + 5_000
      const left = () => Math.max(1, deadline - Date.now())
      const consumer = twain.consumer<string>('t', { group: 'g', commitIntervalMs: 50 })
      const errors: string[] = []
      consumer.on('error', (e) => errors.push(describeErr(e)))
      let closed = false
      try {
        const got: GroupMessage<string>[] = []
        const consumed = (async () => {
          for await (const m of consumer) {
            got.push(m)
            m.ack()
            if (got.length === 5) return
          }
        })()
        await within(consumed, left(), 'consuming 5 messages past the planted group lock').catch((e: unknown) => {
          throw new Error(`${describeErr(e)}; consumed ${got.length}; error events: ${errors.join(' | ') || 'none'}`)
        })
        await within(consumer.commit(), left(), 'commit() past the planted group lock')
        await within(consumer.close(), left(), 'close() past the planted group lock')
        closed = true
      } finally {
        if (!closed) {
          rmSync(path, { force: true })
          await within(consumer.close(), 35_000, 'consumer close').catch(() => undefined)
        }
      }
      expect(Date.now()).toBeLessThanOrEqual(deadline)
      const d = await twain.describeGroup('g')
      expect(d.topics.find((t) => t.topic === 't' && t.partition === 0)).toMatchObject({ committed: 5, lag: 0 })
      const now = existsSync(path) ? readFileSync(path, 'utf8') : undefined
      expect(now, 'the planted group lock is still there').not.toBe(k.content())
    }, 60_000)
  }
})
