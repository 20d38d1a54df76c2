// A consumer group member's fatal failure is reported once: on a store it cannot write (a
// read-only file system) the member fails at start; to an 'error' listener that is one event, to
// an iteration without a listener it is the loop's error and no warning besides, and an iteration
// begun after the failure throws it too. `twainmq tail --group` there prints one line and exits 1.
// Before: the 'error' event came three times (the failure, then two coordination steps of the
// closing member meeting the same read-only directory), the CLI printed three lines and exited 0
// (its loop began after the member had closed and ended quietly).
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { open, TopicNotFoundError, type Twain } from '../../src/index.js'
import { runCli } from '../helpers/cli.js'
import { mountTmpfs, type Tmpfs } from '../helpers/tmpfs.js'
import { tempDir } from '../helpers/tmp.js'
import { until } from '../helpers/wait.js'

let fs: Tmpfs
let root: string
const warnings: Error[] = []
const onWarning = (w: Error) => {
  if (w.name === 'TwainmqWarning') warnings.push(w)
}

function remount(mode: 'ro' | 'rw'): void {
  const r = spawnSync('mount', ['-o', `remount,${mode}`, fs.dir], { encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`mount -o remount,${mode} ${fs.dir} failed (needs root): ${r.stderr}`)
}

beforeAll(async () => {
  fs = mountTmpfs({ size: '8m' })
  root = join(fs.dir, 'root')
  const twain = await open(root)
  await twain.createTopic('t')
  await twain.producer<string>('t').send(1, 'hello')
  await twain.close()
  remount('ro')
})
afterAll(() => {
  remount('rw')
  fs.unmount()
})
beforeEach(() => {
  warnings.length = 0
  process.on('warning', onWarning)
})
afterEach(() => {
  process.off('warning', onWarning)
})

describe('a group member on a read-only store', () => {
  it("fails once: one 'error' event, the loop throws the same error, a later loop throws it too", async () => {
    const twain = await open(root)
    try {
      const c = twain.consumer<string>('t', { group: 'g' })
      const errors: Error[] = []
      c.on('error', (e) => errors.push(e))
      await c.rebalance()
      const thrown = await (async () => {
        for await (const _ of c) return undefined
      })().catch((e: unknown) => e)
      await c.close()
      expect(errors).toHaveLength(1)
      expect(errors[0]).toMatchObject({ code: 'ERR_BACKEND', message: expect.stringMatching(/EROFS/) })
      expect(thrown).toBe(errors[0])
      expect(c.poll()).toBeUndefined()
      const later = async () => {
        for await (const _ of c) return 'a message'
        return 'the end'
      }
      await expect(later()).rejects.toBe(errors[0])
      expect(warnings).toEqual([])
    } finally {
      await twain.close()
    }
  })

  it('without a listener, a loop under way gets the failure and nothing is printed as a warning', async () => {
    const twain = await open(root)
    try {
      const c = twain.consumer<string>('t', { group: 'g' })
      const thrown = await (async () => {
        for await (const _ of c) return undefined
      })().catch((e: unknown) => e)
      await c.close()
      expect(thrown).toMatchObject({ code: 'ERR_BACKEND' })
      expect(warnings).toEqual([])
    } finally {
      await twain.close()
    }
  })

  it('twainmq tail --group prints the failure once and exits 1', async () => {
    const r = await runCli(['tail', 't', '--group', 'g', '--url', root])
    expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^ERR_BACKEND: .*EROFS/)])
    expect(r.code).toBe(1)
  })
})

describe('a group member of a topic that does not exist', () => {
  it('the loop throws TopicNotFoundError and no TwainmqWarning is printed besides', async () => {
    const tmp = tempDir()
    const twain: Twain = await open(tmp.dir)
    try {
      const c = twain.consumer<string>('missing', { group: 'g' })
      const thrown = await (async () => {
        for await (const _ of c) return undefined
      })().catch((e: unknown) => e)
      expect(thrown).toBeInstanceOf(TopicNotFoundError)
      await c.close()
      expect(warnings).toEqual([])
    } finally {
      await twain.close()
      tmp.remove()
    }
  })

  it('a loop begun after the failure (consumer(), an await, then for await) throws it, and no warning is printed', async () => {
    const tmp = tempDir()
    const twain: Twain = await open(tmp.dir)
    try {
      const c = twain.consumer<string>('missing', { group: 'g' })
      await c.rebalance() // the member has failed by now
      const thrown = await (async () => {
        for await (const _ of c) return undefined
      })().catch((e: unknown) => e)
      expect(thrown).toBeInstanceOf(TopicNotFoundError)
      await new Promise((resolve) => setImmediate(resolve))
      await c.close()
      expect(warnings).toEqual([])
    } finally {
      await twain.close()
      tmp.remove()
    }
  })

  it('a consumer that nobody iterates or listens to warns once', async () => {
    const tmp = tempDir()
    const twain: Twain = await open(tmp.dir)
    try {
      const c = twain.consumer<string>('missing', { group: 'g' })
      await until(() => warnings.length > 0, 5000, 'a TwainmqWarning')
      expect(warnings).toHaveLength(1)
      expect(warnings[0]?.message).toMatch(/ERR_TOPIC_NOT_FOUND/)
      await c.close()
    } finally {
      await twain.close()
      tmp.remove()
    }
  })
})
