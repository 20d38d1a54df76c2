// A process that exits by itself without close() (its event loop ran empty: 'beforeExit') commits
// what it acked first, best effort (issue 10), so a script that forgets close() is not redelivered
// what it processed. process.exit(), signals and crashes still redeliver (at-least-once).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { open } from '../../../src/index.js'
import { RedisServer } from '../../helpers/redis-server.js'
import { exited, lines, spawnChild } from '../../helpers/spawn.js'
import { tempDir } from '../../helpers/tmp.js'

let server: RedisServer
const dirs: Array<() => void> = []
beforeAll(async () => {
  server = await RedisServer.start()
})
afterAll(async () => {
  await server.destroy()
  for (const rm of dirs) rm()
})

async function runChild(target: string, prefix: string, mode: 'partitioned' | 'shared', count: number): Promise<void> {
  const child = spawnChild('exit-without-close.ts', [target, prefix, mode, String(count)])
  const out = lines(child)
  const code = await exited(child)
  expect({ code, out: out.lines, stderr: out.stderr() }).toMatchObject({ code: 0, out: [`acked ${count}`] })
}

describe('exiting without close()', () => {
  it.each([
    ['file', 'partitioned'],
    ['redis', 'partitioned'],
    ['redis', 'shared'],
  ] as const)(
    '%s, %s: what was acked is committed before the process exits',
    async (backend, mode) => {
      let target = server.url
      const prefix = backend === 'redis' ? `exit-${mode}:` : ''
      if (backend === 'file') {
        const t = tempDir('twainmq-exit-')
        dirs.push(t.remove)
        target = t.dir
      }
      await runChild(target, prefix, mode, 7)
      const twain = await open(target, prefix ? { prefix } : {})
      try {
        const d = await twain.describeGroup('g')
        expect(d.topics).toMatchObject([{ topic: 't', partition: 0, committed: 7, end: 7, lag: 0 }])
        if (mode === 'shared') expect(d.topics[0]?.pending).toBe(0)
        // A new member of the group gets only what came after.
        await twain.producer<string>('t').send(1, 'later')
        const c = twain.consumer<string>('t', { group: 'g', mode, sessionTimeoutMs: 1000 })
        for await (const m of c) {
          expect(m.offset).toBe(7)
          m.ack()
          break
        }
        await c.close()
      } finally {
        await twain.close()
      }
    },
    30_000,
  )

  it('live consumers share one beforeExit listener; close() removes it (nothing is committed after close)', async () => {
    const t = tempDir('twainmq-exit-')
    dirs.push(t.remove)
    const twain = await open(t.dir)
    await twain.createTopic('t')
    const before = process.listenerCount('beforeExit')
    const a = twain.consumer('t', { group: 'g' })
    const b = twain.consumer('t', { group: 'h' })
    expect(process.listenerCount('beforeExit')).toBe(before + 1)
    await a.close()
    expect(process.listenerCount('beforeExit')).toBe(before + 1)
    await b.close()
    expect(process.listenerCount('beforeExit')).toBe(before)
    await twain.close()
  })
})
