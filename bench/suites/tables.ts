/*
 * `npm run bench -- tables`: a table's `ready()` on a compacted topic against `history()` over the
 * same updates before compaction, on the file backend and on a private redis-server, same run.
 *
 *   a. history() over every update (1,000,000 over 5,000 keys by default), before compaction
 *   b. twain.table(topic).ready() before compaction (it reads the same history)
 *   c. one compaction pass (what `twainmq topics compact <topic>` runs)
 *   d. twain.table(topic).ready() after it — the goal: d ≤ 5% of a
 *   e. history() over a topic of one record per key (the floor d is compared with)
 *   f. the sends of a (the compacted topic, its background passes running) against the same sends
 *      to a plain topic: the cost of compaction to the send path
 */
import { open, type Twain } from '../../src/index.js'
import { backendOf } from '../../src/facade/twain.js'
import { RedisServer } from '../../test/helpers/redis-server.js'
import { log, logGoals, logRunHeader, makeValue } from '../lib/report.js'
import { fmtInt, fmtNum } from '../lib/stats.js'
import type { Suite, SuiteOptions } from '../lib/suite.js'
import { renderTable } from '../lib/table.js'
import { makeTempDir, removeTempDir } from '../lib/tmp.js'

const KEYS = 5000
const PARTITIONS = 4
const BATCH = 5000

interface Row {
  backend: string
  history: number[]
  tableBefore: number[]
  compact: number[]
  tableAfter: number[]
  floor: number[]
  /** Sending the updates to the compacted topic, and to a plain one. */
  sendCompacted: number[]
  sendPlain: number[]
  /** Records left after compaction, and every table's size (must be KEYS). */
  left: number
  sizes: number[]
}

const ms = (t0: bigint): number => Number(process.hrtime.bigint() - t0) / 1e6

async function fill(twain: Twain, topic: string, n: number, value: string): Promise<void> {
  const p = twain.producer<string, string>(topic)
  for (let i = 0; i < n; i += BATCH) {
    const m = Math.min(BATCH, n - i)
    await p.sendBatch(Array.from({ length: m }, (_, j) => ({ key: `key-${(i + j) % KEYS}`, value })))
  }
  await p.close()
}

async function readAll(twain: Twain, topic: string): Promise<number> {
  let n = 0
  for await (const _ of twain.history(topic)) n++
  return n
}

async function tableReady(twain: Twain, topic: string): Promise<{ ms: number; size: number }> {
  const t0 = process.hrtime.bigint()
  const table = twain.table(topic)
  await table.ready()
  const took = ms(t0)
  const size = table.size
  await table.close()
  return { ms: took, size }
}

async function rounds(backend: string, target: string, o: SuiteOptions, value: string): Promise<Row> {
  const twain = await open(target)
  const row: Row = {
    backend,
    history: [],
    tableBefore: [],
    compact: [],
    tableAfter: [],
    floor: [],
    sendCompacted: [],
    sendPlain: [],
    left: 0,
    sizes: [],
  }
  try {
    for (let r = 0; r < o.repeat; r++) {
      const tag = `[${backend} ${r + 1}/${o.repeat}]`
      const topic = `updates${r}`
      const floorTopic = `keys${r}`
      await twain.createTopic(topic, { partitions: PARTITIONS, keyType: 'string', compact: true })
      await twain.createTopic(floorTopic, { partitions: PARTITIONS, keyType: 'string' })
      await twain.createTopic(`plain${r}`, { partitions: PARTITIONS, keyType: 'string' })
      let t0 = process.hrtime.bigint()
      await fill(twain, `plain${r}`, o.messages, value)
      row.sendPlain.push(ms(t0))
      t0 = process.hrtime.bigint()
      await fill(twain, topic, o.messages, value)
      row.sendCompacted.push(ms(t0))
      await twain.deleteTopic(`plain${r}`)
      await fill(twain, floorTopic, KEYS, value)
      t0 = process.hrtime.bigint()
      const n = await readAll(twain, topic)
      row.history.push(ms(t0))
      if (n !== o.messages) throw new Error(`${tag} history read ${n} of ${o.messages} updates before compaction`)
      const before = await tableReady(twain, topic)
      row.tableBefore.push(before.ms)
      row.sizes.push(before.size)
      t0 = process.hrtime.bigint()
      await backendOf(twain).compact(topic)
      row.compact.push(ms(t0))
      row.left = await readAll(twain, topic)
      const after = await tableReady(twain, topic)
      row.tableAfter.push(after.ms)
      row.sizes.push(after.size)
      t0 = process.hrtime.bigint()
      await readAll(twain, floorTopic)
      row.floor.push(ms(t0))
      log(
        `${tag} sends: plain ${fmtNum(row.sendPlain.at(-1) as number, 0)} ms, compacted ${fmtNum(row.sendCompacted.at(-1) as number, 0)} ms; ` +
          `history ${fmtNum(row.history.at(-1) as number, 0)} ms, table before ${fmtNum(before.ms, 0)} ms, ` +
          `compact ${fmtNum(row.compact.at(-1) as number, 0)} ms (${fmtInt(row.left)} records left), ` +
          `table after ${fmtNum(after.ms, 1)} ms, ${KEYS} records ${fmtNum(row.floor.at(-1) as number, 1)} ms`,
      )
      await twain.deleteTopic(topic)
      await twain.deleteTopic(floorTopic)
    }
  } finally {
    await twain.close()
  }
  return row
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[(xs.length - 1) >> 1] as number

const suite: Suite = {
  name: 'tables',
  description: "a table's ready() on a compacted topic vs history() over the updates before compaction",
  async run(o: SuiteOptions): Promise<void> {
    logRunHeader('tables', o.command)
    log(
      `setup:   ${o.repeat} round(s); ${fmtInt(o.messages)} updates of ${o.size} B values over ${KEYS} keys, ${PARTITIONS} partitions`,
    )
    log('')
    const value = makeValue(o.size)
    const rows: Row[] = []
    const dir = makeTempDir('tables')
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
    log('milliseconds, median of the rounds (ratio = median of the same-round ratios):')
    const table: string[][] = [
      [
        'backend',
        'a. history',
        'b. table before',
        'c. compact',
        'd. table after',
        'd / a',
        `e. ${KEYS} records`,
        'd / e',
        'f. sends compacted / plain',
      ],
    ]
    const goals: Array<[string, boolean, string]> = []
    for (const r of rows) {
      const da = r.tableAfter.map((x, i) => x / (r.history[i] as number))
      const de = r.tableAfter.map((x, i) => x / (r.floor[i] as number))
      const sends = r.sendPlain.map((x, i) => x / (r.sendCompacted[i] as number))
      table.push([
        r.backend,
        fmtNum(median(r.history), 0),
        fmtNum(median(r.tableBefore), 0),
        fmtNum(median(r.compact), 0),
        fmtNum(median(r.tableAfter), 1),
        `${fmtNum(median(da) * 100, 2)}%`,
        fmtNum(median(r.floor), 1),
        `${fmtNum(median(de), 2)}×`,
        `${fmtNum(median(sends), 2)}×`,
      ])
      goals.push([
        `${r.backend}: sends to a compacted topic ≥ 0.9× sends to a plain one (compaction costs the send path ≤ 10%)`,
        median(sends) >= 0.9,
        `${fmtNum(median(sends), 2)}×`,
      ])
      goals.push([
        `${r.backend}: table ready() after compaction ≤ 5% of history() before it`,
        median(da) <= 0.05,
        `${fmtNum(median(da) * 100, 2)}%`,
      ])
      goals.push([
        `${r.backend}: every table holds ${KEYS} keys`,
        r.sizes.every((s) => s === KEYS),
        `sizes ${[...new Set(r.sizes)].join(', ')}`,
      ])
    }
    log(renderTable(table, [false, true, true, true, true, true, true, true, true]))
    log('')
    logGoals(goals)
  },
}

export default suite
