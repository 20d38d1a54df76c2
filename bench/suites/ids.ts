/*
 * `npm run bench -- ids`: idempotent sends (`send(key, value, { id })`) against plain sends, on the
 * file backend and on a private redis-server, alternating in the same run, then the same ids sent
 * again (every one a duplicate: the stored count must not move).
 *
 *   a. Promise.all of 1000 producer.send calls at a time, no id
 *   b. the same with a unique id per send (default window, 5 minutes)
 *   c. b's sends again, same ids: all duplicates, nothing stored
 */
import { open, type Twain } from '../../src/index.js'
import { RedisServer } from '../../test/helpers/redis-server.js'
import { CHUNK, rate, timed, type Throughput } from '../lib/phases.js'
import { log, logGoals, logRunHeader, makeValue } from '../lib/report.js'
import { fmtInt, fmtNum } from '../lib/stats.js'
import type { Suite, SuiteOptions } from '../lib/suite.js'
import { renderTable } from '../lib/table.js'
import { makeTempDir, removeTempDir } from '../lib/tmp.js'

/** `Promise.all` of 1000 sends at a time; `id(i)` gives each send's id (none when undefined). */
async function sendAll(
  twain: Twain,
  topic: string,
  n: number,
  value: string,
  tag: string,
  label: string,
  id: ((i: number) => string) | undefined,
): Promise<{ t: Throughput; duplicates: number }> {
  const p = twain.producer<string>(topic)
  let duplicates = 0
  const t = await timed(label, n, value.length, tag, async (tick) => {
    const sends = new Array<Promise<{ duplicate?: true }>>(CHUNK)
    for (let i = 0; i < n; i += CHUNK) {
      const m = Math.min(CHUNK, n - i)
      sends.length = m
      for (let j = 0; j < m; j++)
        sends[j] = id === undefined ? p.send((i + j) % 65536, value) : p.send((i + j) % 65536, value, { id: id(i + j) })
      for (const r of await Promise.all(sends)) if (r.duplicate) duplicates++
      tick(i)
    }
  })
  await p.close()
  return { t, duplicates }
}

const stored = (twain: Twain, topic: string): Promise<number> => twain.length(topic)

interface Row {
  backend: string
  plain: number[]
  ids: number[]
  again: number[]
  /** Messages stored by the `again` phases (must be 0) and duplicates reported by them (must be all). */
  storedAgain: number
  dupsAgain: number
  dupsFirst: number
  sent: number
}

async function rounds(backend: string, target: string, o: SuiteOptions, value: string): Promise<Row> {
  const twain = await open(target)
  const row: Row = { backend, plain: [], ids: [], again: [], storedAgain: 0, dupsAgain: 0, dupsFirst: 0, sent: 0 }
  try {
    for (let r = 0; r < o.repeat; r++) {
      const tag = `[${backend} ${r + 1}/${o.repeat}]`
      await twain.createTopic(`plain${r}`, { keyType: 'u32' })
      await twain.createTopic(`ids${r}`, { keyType: 'u32' })
      // Plain and id sends alternate within the round, so both see the same machine.
      const a = await sendAll(twain, `plain${r}`, o.messages, value, tag, 'a. Promise.all(send)', undefined)
      const b = await sendAll(
        twain,
        `ids${r}`,
        o.messages,
        value,
        tag,
        'b. Promise.all(send, { id })',
        (i) => `r${r}-${i}`,
      )
      const before = await stored(twain, `ids${r}`)
      const c = await sendAll(twain, `ids${r}`, o.messages, value, tag, 'c. the same ids again', (i) => `r${r}-${i}`)
      row.plain.push(rate(a.t))
      row.ids.push(rate(b.t))
      row.again.push(rate(c.t))
      row.dupsFirst += b.duplicates
      row.dupsAgain += c.duplicates
      row.storedAgain += (await stored(twain, `ids${r}`)) - before
      row.sent += o.messages
    }
  } finally {
    await twain.close()
  }
  return row
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[(xs.length - 1) >> 1] as number

const suite: Suite = {
  name: 'ids',
  description: 'idempotent sends (send with an id) vs plain sends, file and Redis, and the same ids sent again',
  async run(o: SuiteOptions): Promise<void> {
    logRunHeader('ids', o.command)
    log(`setup:   ${o.repeat} round(s) of ${fmtInt(o.messages)} sends of ${o.size} B values per phase, 1 partition`)
    log('')
    const value = makeValue(o.size)
    const rows: Row[] = []
    const dir = makeTempDir('ids')
    try {
      rows.push(await rounds('file', dir, o, value))
    } finally {
      removeTempDir(dir)
    }
    const server = await RedisServer.start()
    try {
      rows.push(await rounds('redis', `redis://127.0.0.1:${server.port}`, o, value))
    } finally {
      await server.destroy()
    }
    log('')
    log('throughput, msgs/s, median of the rounds (ratio = median of the same-round ratios):')
    const table: string[][] = [['backend', 'a. plain', 'b. with id', 'b / a', 'c. ids again', 'c / a']]
    const goals: Array<[string, boolean, string]> = []
    for (const r of rows) {
      const same = r.ids.map((x, i) => x / (r.plain[i] as number))
      const again = r.again.map((x, i) => x / (r.plain[i] as number))
      table.push([
        r.backend,
        fmtInt(median(r.plain)),
        fmtInt(median(r.ids)),
        `${fmtNum(median(same), 2)}×`,
        fmtInt(median(r.again)),
        `${fmtNum(median(again), 2)}×`,
      ])
      goals.push([`${r.backend}: send with id ≥ 0.8× plain send`, median(same) >= 0.8, `${fmtNum(median(same), 2)}×`])
      goals.push([
        `${r.backend}: ids sent again stored 0 times, all reported duplicate`,
        r.storedAgain === 0 && r.dupsAgain === r.sent && r.dupsFirst === 0,
        `${r.storedAgain} stored, ${fmtInt(r.dupsAgain)} of ${fmtInt(r.sent)} duplicate (first sends: ${r.dupsFirst})`,
      ])
    }
    log(renderTable(table, [false, true, true, true, true, true]))
    log('')
    logGoals(goals)
  },
}

export default suite
