// Fault test: a lock holder frozen (SIGSTOP) past the 20 s stale limit, then resumed.
//
// Child A produces continuously to a 1-partition topic. We SIGSTOP it while the partition's lock
// file holds A's pid, keep it stopped 25 s while child B produces to the same partition (B breaks
// the lock as hung after 20 s; B's sends may reject with ERR_TIMEOUT, which are then not acked),
// SIGCONT A, let both run 2 s more and stop them. Specified: nothing either was told is lost,
// duplicated or given a reused offset, history reads to the end (no TopicCorruptError), and a new
// send resolves within 5 s.
import { afterEach, describe, expect, it } from 'vitest'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { ChildProcess } from 'node:child_process'
import { open } from '../../src/index.js'
import { CLEAN, check, readBack } from '../helpers/checker.js'
import { closedPromise, describeErr, parseAcked, parseRejected, within } from '../helpers/faults.js'
import { sleep } from '../helpers/wait.js'
import { watch } from '../helpers/group-children.js'
import { killChildren, spawnChild, until } from '../helpers/spawn.js'
import { tempDir } from '../helpers/tmp.js'

const STOP_MS = 25_000

let tmp: ReturnType<typeof tempDir> | undefined
const children: ChildProcess[] = []

afterEach(async () => {
  await killChildren(children)
  tmp?.remove()
  tmp = undefined
})

/** The pid a lock file names (a JSON identity; `<pid> <token> <ms>` from older versions). */
function lockOwner(content: string): number | undefined {
  try {
    return (JSON.parse(content) as { pid?: number }).pid
  } catch {
    const m = /^(\d+) /.exec(content)
    return m ? Number(m[1]) : undefined
  }
}

/** The state letter of a process (/proc/<pid>/stat): 'T' = stopped. */
function procState(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
  } catch {
    return 'gone'
  }
}

/** Whether a stopped process's main thread was stopped outside a system call (/proc/<pid>/syscall is `-1 …`). */
function inUserCode(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/syscall`, 'utf8').startsWith('-1 ')
  } catch {
    return false
  }
}

/** SIGTERM a fault child and wait until it exited and its output was read to the end (SIGKILL after `ms`). */
async function stopChild(c: ChildProcess, closed: Promise<number | string>, ms = 10_000): Promise<number | string> {
  if (c.exitCode === null && c.signalCode === null) {
    c.kill('SIGCONT')
    c.kill('SIGTERM')
  }
  const timer = setTimeout(() => c.kill('SIGKILL'), ms)
  const code = await closed
  clearTimeout(timer)
  return code
}

describe('SIGSTOP of the append-lock holder past the stale limit', () => {
  it('A frozen 25 s while holding the lock, B producing meanwhile, A resumed: nothing lost, duplicated, reused or unreadable', async () => {
    tmp = tempDir('twainmq-faults-pause-')
    const dir = tmp.dir
    const setup = await open(dir)
    await setup.createTopic('p', { partitions: 1 })
    await setup.close()
    const lock = join(dir, 'p', '0.lock')

    // Big values (1 MB frames): encoding + writing a frame, the critical section, is most of A's time.
    const a = spawnChild('fault-producer.ts', [dir, 'p', 'A', '20', '50000', '90000', '40000'])
    children.push(a)
    const outA = watch(a)
    const closedA = closedPromise(a)
    await until(() => parseAcked(outA.lines).length >= 400, 30_000, `A acking 400 sends (stderr: ${outA.stderr()})`)

    // Catch A holding the lock: stop it, check the lock names A's pid, else resume and retry. For
    // the first attempts also require A's main thread to be stopped in user space (not inside a
    // system call such as the frame's pwrite): with 1 MB frames that is mostly encoding the frame
    // under the lock, the moment where a frozen holder is most dangerous. Either way A holds the lock.
    const pid = a.pid!
    let caught = false
    let attempts = 0
    let inUserSpace = false
    const readLock = () => (existsSync(lock) ? readFileSync(lock, 'utf8') : '')
    for (; attempts < 2000 && !caught; attempts++) {
      a.kill('SIGSTOP')
      await until(
        () => procState(pid) === 'T',
        2_000,
        `A (pid ${pid}) stopped (state ${procState(pid)}, stderr: ${outA.stderr().slice(0, 300)})`,
      )
      inUserSpace = inUserCode(pid)
      if (lockOwner(readLock()) === pid && (inUserSpace || attempts >= 300)) caught = true
      else {
        a.kill('SIGCONT')
        await sleep(Math.floor(Math.random() * 15))
      }
    }
    expect(caught, `could not catch A (pid ${pid}) holding ${lock} in ${attempts} attempts`).toBe(true)
    const stoppedAt = Date.now()
    const heldContent = readLock()
    const ackedAtStop = parseAcked(outA.lines).length

    const b = spawnChild('fault-producer.ts', [dir, 'p', 'B', '50', '200', '90000', '4000000'])
    children.push(b)
    const outB = watch(b)
    const closedB = closedPromise(b)
    await sleep(Math.max(0, STOP_MS - (Date.now() - stoppedAt)))
    const ackedByBWhileStopped = parseAcked(outB.lines).length
    const firstB = outB.lines.findIndex((l) => /^B-\d+ /.test(l))
    const bFirstAckAfter = firstB < 0 ? 'never' : `${outB.times[firstB]! - stoppedAt} ms`
    const stillA = readLock()
    expect(procState(pid), 'A was not kept stopped').toBe('T')
    a.kill('SIGCONT')
    await sleep(2_000)
    const [codeA, codeB] = await Promise.all([stopChild(a, closedA), stopChild(b, closedB)])

    const ackedA = parseAcked(outA.lines)
    const ackedB = parseAcked(outB.lines)
    const rejA = parseRejected(outA.lines)
    const rejB = parseRejected(outB.lines)
    const reader = await open(dir)
    try {
      const back = await within(readBack(reader, 'p'), 30_000, 'reading the partition back')
      const report = check([...ackedA, ...ackedB], back)
      const info =
        `A stopped after ${attempts} attempt(s)${inUserSpace ? ' in user code' : ''} holding ${JSON.stringify(heldContent)} (${ackedAtStop} acked by then); ` +
        `lock after ${STOP_MS} ms: ${JSON.stringify(stillA)}; B acked ${ackedByBWhileStopped} while A was stopped (first ${bFirstAckAfter} after the stop); ` +
        `A: ${ackedA.length} acked, ${rejA.length} rejected (exit ${codeA}); B: ${ackedB.length} acked, ${rejB.length} rejected (exit ${codeB}); ` +
        `rejections: ${
          [...rejA, ...rejB]
            .slice(0, 3)
            .map((r) => r.line)
            .join(' | ') || 'none'
        }\nA stderr: ${outA.stderr().slice(0, 500)}\nB stderr: ${outB.stderr().slice(0, 500)}\n${report.text}`
      console.log(info)
      expect(report.counts, info).toEqual(CLEAN)
      // B may time out waiting for the frozen holder's lock; nothing else is an acceptable send failure.
      expect(
        rejB.filter((r) => r.code !== 'ERR_TIMEOUT').map((r) => r.line),
        info,
      ).toEqual([])
      expect(
        rejA.filter((r) => !r.code.startsWith('ERR_') || r.code === 'ERR_TOPIC_CORRUPT').map((r) => r.line),
        info,
      ).toEqual([])
      expect([codeA, codeB], info).toEqual([0, 0])

      const r = await within(
        reader.producer<string>('p').send(1, 'after the pause'),
        5_000,
        'a new send after the pause',
      ).catch((e: unknown) => e)
      expect(r, describeErr(r)).toMatchObject({ partition: 0, offset: back.offsets[0]!.end })
      const again = await readBack(reader, 'p')
      const report2 = check([...ackedA, ...ackedB, { id: 'after', partition: 0, offset: back.offsets[0]!.end }], again)
      expect(report2.counts, report2.text).toEqual(CLEAN)
    } finally {
      await within(reader.close(), 10_000, 'reader close').catch(() => undefined)
    }
  }, 120_000)
})
