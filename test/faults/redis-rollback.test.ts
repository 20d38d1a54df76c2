// Rollbacks of a partition's log (issue 12, deliver 4): one Redis restored from an older AOF. Live
// tails and groups had seen offsets the restored server hands out again; they must deliver the
// records now stored there (none skipped) and report the rollback once as ERR_LOG_ROLLBACK.
import { cpSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { open, type Message, type Twain } from '../../src/index.js'
import { RedisServer } from '../helpers/redis-server.js'
import { until } from '../helpers/wait.js'

/** Stop the server, put the AOF saved in `saved` back, start it again: the log is back where it was then. */
async function restoreOlder(server: RedisServer, saved: string): Promise<void> {
  await server.stop()
  rmSync(join(server.dir, 'appendonlydir'), { recursive: true, force: true })
  cpSync(saved, join(server.dir, 'appendonlydir'), { recursive: true })
  await server.restart()
}

function rollbackWarnings(): { got: Error[]; off: () => void } {
  const got: Error[] = []
  const on = (w: Error) => {
    if ((w as { code?: string }).code === 'ERR_LOG_ROLLBACK') got.push(w)
  }
  process.on('warning', on)
  return { got, off: () => process.off('warning', on) }
}

describe('one Redis restored from an older AOF', () => {
  let server: RedisServer | undefined
  const opened: Twain[] = []
  afterEach(async () => {
    for (const t of opened.splice(0)) await t.close()
    await server?.destroy()
  })

  it('a live tail, a partitioned group and a shared group deliver the records at reused offsets and report the rollback once', async () => {
    server = await RedisServer.start({ aof: true })
    const twain = await open(server.url, { prefix: 'rb:' })
    const writer = await open(server.url, { prefix: 'rb:' })
    opened.push(twain, writer)
    await twain.createTopic('t')
    const p = writer.producer<string>('t')
    for (let i = 0; i < 5; i++) await p.send(i, `old-${i}`)
    // A shared group joined before the snapshot: the restored stream holds its consumer group, at offset 5.
    const sharedGot: Message<string>[] = []
    const sharedErrors: Error[] = []
    const sc = twain.consumer<string>('t', { group: 's', mode: 'shared' })
    sc.on('error', (e) => sharedErrors.push(e))
    const sharedLoop = (async () => {
      for await (const m of sc) {
        sharedGot.push(m)
        m.ack()
      }
    })()
    await until(() => sharedGot.length === 5, 10_000, 'the shared group reads the first 5')
    const saved = join(server.dir, '..', `${server.port}-saved`)
    cpSync(join(server.dir, 'appendonlydir'), saved, { recursive: true })
    for (let i = 5; i < 10; i++) await p.send(i, `lost-${i}`)

    const tailed: Message<string>[] = []
    const tail = twain.tail<string>('t', { from: 'start' })
    const tailLoop = (async () => {
      for await (const m of tail) tailed.push(m)
    })()
    const grouped: Message<string>[] = []
    const groupErrors: Error[] = []
    const c = twain.consumer<string>('t', {
      group: 'g',
      sessionTimeoutMs: 5000,
      heartbeatIntervalMs: 100,
      commitIntervalMs: 50,
    })
    c.on('error', (e) => groupErrors.push(e))
    const groupLoop = (async () => {
      for await (const m of c) {
        grouped.push(m)
        m.ack()
      }
    })()
    await until(
      () => tailed.length === 10 && grouped.length === 10 && sharedGot.length === 10,
      10_000,
      `10 tailed and grouped (have ${tailed.length}, ${grouped.length}, ${sharedGot.length})`,
    )
    await until(
      async () => (await twain.describeGroup('g')).topics.every((t) => t.lag === 0),
      10_000,
      'commits to the end',
    )

    const warnings = rollbackWarnings()
    try {
      await restoreOlder(server, saved)
      rmSync(saved, { recursive: true, force: true })
      // The restored server hands out offsets 5.. again; more new records than were lost.
      for (let i = 5; i < 13; i++) await p.send(i, `new-${i}`)
      const want = [
        ...Array.from({ length: 5 }, (_, i) => `old-${i}`),
        ...Array.from({ length: 5 }, (_, i) => `lost-${i + 5}`),
        ...Array.from({ length: 8 }, (_, i) => `new-${i + 5}`),
      ]
      await until(
        () => tailed.length >= 18 && grouped.length >= 18,
        15_000,
        `18 tailed and grouped (have ${tailed.map((m) => m.value).join()} | ${grouped.map((m) => m.value).join()})`,
      )
      expect(tailed.map((m) => m.value)).toEqual(want)
      expect(tailed.slice(10).map((m) => m.offset)).toEqual([5, 6, 7, 8, 9, 10, 11, 12])
      expect(
        grouped.map((m) => m.value),
        `group errors: ${groupErrors.map((e) => `${(e as { code?: string }).code}: ${e.message}`).join(' | ')}`,
      ).toEqual(want)
      await until(
        () => sharedGot.length >= 18,
        10_000,
        `18 in the shared group (have ${sharedGot.map((m) => m.value).join()})`,
      )
      expect(sharedGot.map((m) => m.value)).toEqual(want)
      const srb = sharedErrors.filter((e) => (e as { code?: string }).code === 'ERR_LOG_ROLLBACK')
      expect(srb).toHaveLength(1)
      expect(srb[0]).toMatchObject({ topic: 't', partition: 0, from: 5, to: 9 })
      // Reported once each: the tail and the producer (given offsets 5..9 before, and again now)
      // through process warnings (they have no error channel), the groups as 'error' events.
      expect(warnings.got.map((w) => w.message.match(/seen by (a \w+)/)?.[1]).sort()).toEqual([
        'a producer',
        'a reader',
      ])
      for (const w of warnings.got)
        expect(w).toMatchObject({ code: 'ERR_LOG_ROLLBACK', topic: 't', partition: 0, from: 5, to: 9 })
      const rb = groupErrors.filter((e) => (e as { code?: string }).code === 'ERR_LOG_ROLLBACK')
      expect(rb).toHaveLength(1)
      expect(rb[0]).toMatchObject({ topic: 't', partition: 0, from: 5, to: 9 })
      // Commits follow the new log: never past its end.
      await until(
        async () => (await twain.describeGroup('g')).topics.every((t) => t.lag === 0),
        10_000,
        'commits to the new end',
      )
      const d = await twain.describeGroup('g')
      expect(d.topics[0]).toMatchObject({ committed: 13, end: 13 })
    } finally {
      warnings.off()
      await tail.close()
      await c.close()
      await sc.close()
      await Promise.all([tailLoop, groupLoop, sharedLoop])
    }
  }, 60_000)

  it('a live tail follows its topic deleted and created again (decision 57): the new records from offset 0, reported once', async () => {
    server = await RedisServer.start()
    const twain = await open(server.url, { prefix: 'rc:' })
    const other = await open(server.url, { prefix: 'rc:' })
    opened.push(twain, other)
    await twain.createTopic('t')
    const p = other.producer<string>('t')
    for (let i = 0; i < 5; i++) await p.send(i, `old-${i}`)
    const tailed: Message<string>[] = []
    const tail = twain.tail<string>('t', { from: 'start' })
    const tailLoop = (async () => {
      for await (const m of tail) tailed.push(m)
    })()
    await until(() => tailed.length === 5, 10_000, 'the first topic')
    const warnings = rollbackWarnings()
    try {
      await other.deleteTopic('t')
      await other.createTopic('t')
      // More records than the old topic had, at once: the new end passes the old one.
      const p2 = other.producer<string>('t')
      await p2.sendBatch(Array.from({ length: 8 }, (_, i) => ({ key: i, value: `new-${i}` })))
      await until(() => tailed.length >= 13, 10_000, `the re-created topic (have ${tailed.map((m) => m.value).join()})`)
      expect(tailed.slice(5).map((m) => [m.offset, m.value])).toEqual(
        Array.from({ length: 8 }, (_, i) => [i, `new-${i}`]),
      )
      expect(warnings.got).toHaveLength(1)
      expect(warnings.got[0]).toMatchObject({ code: 'ERR_LOG_ROLLBACK', topic: 't', partition: 0, from: 0, to: 4 })
    } finally {
      warnings.off()
      await tail.close()
      await tailLoop
    }
  }, 30_000)
})
