import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { exited, killChildren, lines, repoRoot } from '../../helpers/spawn.js'
import { tempDir } from '../../helpers/tmp.js'

/*
 * A 10,000-partition topic under `ulimit -n 1024`: produced to, read with history, tailed from the
 * start and consumed by a group, in one process (test/helpers/children/wide-topic.ts). Before the
 * fd pool the produce step alone failed with EMFILE (two fds per partition written, kept for the
 * life of the instance), and the group took minutes to its first delivery (an offsets query of
 * every partition per leased partition: O(P²)).
 */

const PARTITIONS = 10_000
const MAX_OPEN_FILES = 256
/** Node's own fds (stdio, epoll, inotify, worker pipes) and transient ones (locks, index look-ups). */
const SLACK = 48
/**
 * Measured ~1-3 s on a loaded 2-core machine; the failure it guards against took minutes (O(P²)
 * offsets queries). A bound no load reaches that still tells the two apart.
 */
const FIRST_DELIVERY_MS = 30_000

const children: ReturnType<typeof spawn>[] = []
let tmp: ReturnType<typeof tempDir> | undefined

// Removing 10,000 partition directories takes tens of seconds on a loaded machine.
afterEach(async () => {
  await killChildren(children)
  tmp?.remove()
  tmp = undefined
}, 180_000)

describe.skipIf(!existsSync('/proc/self/fd') || !existsSync('/bin/bash'))('a very wide topic', () => {
  it(`is produced to, read, tailed and consumed with ${PARTITIONS} partitions under ulimit -n 1024, fds within maxOpenFiles`, async () => {
    tmp = tempDir()
    const child = join(repoRoot, 'test', 'helpers', 'children', 'wide-topic.ts')
    const opts = JSON.stringify({ maxOpenFiles: MAX_OPEN_FILES })
    // The limit applies to the child alone; `exec` keeps the pid (killChildren kills by pid).
    const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`
    const script = `ulimit -n 1024 && exec ${quote(process.execPath)} --import tsx ${quote(child)} ${quote(tmp.dir)} ${PARTITIONS} ${quote(opts)}`
    const c = spawn('/bin/bash', ['-c', script], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] })
    children.push(c)
    const out = lines(c)
    const code = await exited(c)
    const line = out.lines.find((l) => l.startsWith('RESULT '))
    const context = `${out.lines.join('\n')}\n${out.stderr()}`
    expect(line, context).toBeDefined()
    const result = JSON.parse((line as string).slice('RESULT '.length)) as {
      ok: boolean
      error?: string
      firstDeliveryMs?: number
      maxFds: number
    }
    expect(result.error, context).toBeUndefined()
    expect(result.ok).toBe(true)
    expect(code).toBe(0)
    expect(result.firstDeliveryMs, context).toBeLessThan(FIRST_DELIVERY_MS)
    expect(result.maxFds, context).toBeLessThanOrEqual(MAX_OPEN_FILES + SLACK)
  }, 300_000)
})
