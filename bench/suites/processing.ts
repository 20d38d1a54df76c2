/*
 * `npm run bench -- processing`: stateful processing against the same pipelines written by hand,
 * on the file backend and on a private redis-server, same run.
 *
 *   a. a 10-second tumbling count of clicks per user by event time (clicks ±1 s out of order, 1 in
 *      100 15 s late; 1 s of lateness), written by
 *      hand: a consumer read as an RxJS Observable, each partition's watermark and open windows in
 *      memory, each result sent with a producer, every click acked once counted (at-least-once,
 *      lost on a crash)
 *   b. the same count with `windowed(processor, …)` (exactly once, restartable) — goal: b ≥ 0.5× a
 *   c. orders enriched from a customer table by hand: a consumer, `table.get`, a producer, ack
 *   d. the same with a processor, `joinTable` and `m.send` (exactly once)
 *   e. a state store of 1,000,000 keys (`--state-keys`) restored in a new processor (as after kill
 *      -9: the restore reads the changelog, whatever stopped the last owner)
 *   f. history() over the changelog's records — the goal: e ≤ 3× f
 *
 * Throughputs are inputs per second from the start of the phase until every result is stored.
 * The windows' results of a and b are compared: the same windows with the same counts.
 */
import { from, type Subscription } from 'rxjs'
import { joinTable, pipe } from '../../src/operators/index.js'
import { open, tumbling, windowed, type Twain } from '../../src/index.js'
import { RedisServer } from '../../test/helpers/redis-server.js'
import { BATCH, LATENESS, PARTITIONS, SIZE, USERS, sendClicks } from '../lib/clicks.js'
import { log, logGoals, logRunHeader } from '../lib/report.js'
import { fmtInt, fmtNum, median, sleep } from '../lib/stats.js'
import type { Suite, SuiteOptions } from '../lib/suite.js'
import { renderTable } from '../lib/table.js'
import { makeTempDir, removeTempDir } from '../lib/tmp.js'

const CUSTOMERS = 10_000
/** Keys one message of the restore phase writes (a message writes at most 1000). */
const KEYS_PER_MESSAGE = 1000

interface Row {
  backend: string
  hand: number[]
  windowed: number[]
  joinHand: number[]
  joinProc: number[]
  restore: number[]
  history: number[]
  /** Windows of a and b, and whether they were the same each round. */
  windows: number
  same: boolean[]
}

const ms = (t0: bigint): number => Number(process.hrtime.bigint() - t0) / 1e6
const rate = (n: number, took: number): number => (n * 1000) / took

/** a: the windows by hand, in memory; resolves with `user start count` of every result once stored. */
async function handWindows(twain: Twain, input: string, output: string, total: number): Promise<string[]> {
  await twain.createTopic(output, { partitions: 2, keyType: 'string' })
  const consumer = twain.consumer<number, string>(input, { group: `hand-${input}`, from: 'start' })
  const producer = twain.producer<{ start: number; end: number; value: number }, string>(output)
  const wm = new Map<number, number>()
  // Per partition: window end → user → count.
  const open = new Map<number, Map<number, Map<string, number>>>()
  const results: string[] = []
  const sends: Array<Promise<unknown>> = []
  let seen = 0
  let sub: Subscription | undefined
  await new Promise<void>((resolve, reject) => {
    sub = from(consumer).subscribe({
      next: (m) => {
        const p = m.partition
        const w = wm.get(p) ?? -Infinity
        const start = Math.floor(m.timestamp / SIZE) * SIZE
        const ends = open.get(p) ?? open.set(p, new Map()).get(p)!
        if (!m.key.startsWith('end-') && start + SIZE > w) {
          const users = ends.get(start + SIZE) ?? ends.set(start + SIZE, new Map()).get(start + SIZE)!
          users.set(m.key, (users.get(m.key) ?? 0) + 1)
        }
        if (m.timestamp - LATENESS > w) {
          const next = m.timestamp - LATENESS
          wm.set(p, next)
          for (const [end, users] of ends)
            if (end <= next) {
              ends.delete(end)
              for (const [user, n] of users) {
                results.push(`${user} ${end - SIZE} ${n}`)
                sends.push(producer.send(user, { start: end - SIZE, end, value: n }, { timestamp: end - 1 }))
              }
            }
        }
        m.ack()
        if (++seen === total) resolve()
      },
      error: reject,
    })
  })
  await Promise.all(sends)
  sub?.unsubscribe()
  await consumer.close()
  await producer.close()
  return results
}

/** b: the same with windowed(); resolves with every result once stored. */
async function exactlyOnceWindows(twain: Twain, input: string, output: string, expected: number): Promise<string[]> {
  await twain.createTopic(output, { partitions: 2, keyType: 'string' })
  const proc = twain.processor<number, string>(input, { group: `win-${input}`, state: 'w', from: 'start' })
  const results: string[] = []
  for await (const r of windowed(proc, {
    window: tumbling(SIZE),
    latenessMs: LATENESS,
    to: output,
    initial: () => 0,
    add: (n) => n + 1,
  })) {
    results.push(`${r.key} ${r.start} ${r.value}`)
    if (results.length === expected) break
  }
  await proc.close()
  return results
}

const order = (i: number) => ({ key: `o${i}`, value: { customer: `c${(i * 7) % CUSTOMERS}`, total: i } })

async function sendOrders(twain: Twain, topic: string, n: number): Promise<void> {
  await twain.createTopic(topic, { partitions: PARTITIONS, keyType: 'string' })
  const p = twain.producer<{ customer: string; total: number }, string>(topic)
  for (let i = 0; i < n; i += BATCH)
    await p.sendBatch(Array.from({ length: Math.min(BATCH, n - i) }, (_, j) => order(i + j)))
  await p.close()
}

/** c and d: orders joined with the customer table, by hand (at-least-once) or exactly once. */
async function joinOrders(twain: Twain, input: string, n: number, exactlyOnce: boolean): Promise<void> {
  const output = `${input}-${exactlyOnce ? 'eo' : 'hand'}`
  await twain.createTopic(output, { partitions: PARTITIONS, keyType: 'string' })
  const customers = twain.table<string, string>('customers')
  let done = 0
  if (exactlyOnce) {
    const proc = twain.processor<{ customer: string; total: number }, string>(input, { group: output, from: 'start' })
    const sends: Array<Promise<unknown>> = []
    for await (const j of pipe(proc, joinTable(customers, { key: (m) => m.value.customer }))) {
      sends.push(j.message.send(output, j.message.key, { ...j.message.value, tier: j.value }))
      j.ack()
      if (++done === n) break
    }
    await Promise.all(sends)
    await proc.commit()
    await proc.close()
  } else {
    await customers.ready()
    const consumer = twain.consumer<{ customer: string; total: number }, string>(input, {
      group: output,
      from: 'start',
    })
    const producer = twain.producer<object, string>(output)
    const sends: Array<Promise<unknown>> = []
    for await (const m of consumer) {
      sends.push(producer.send(m.key, { ...m.value, tier: customers.get(m.value.customer) }))
      m.ack()
      if (++done === n) break
    }
    await Promise.all(sends)
    await consumer.close()
    await producer.close()
  }
  await customers.close()
}

/** e and f: a store of `keys` keys written, then restored in a new processor; and history() of its changelog. */
async function restore(target: string, round: number, keys: number): Promise<{ restore: number; history: number }> {
  const input = `fill${round}`
  const twain = await open(target)
  await twain.createTopic(input, { partitions: 1, keyType: 'u32' })
  const messages = Math.ceil(keys / KEYS_PER_MESSAGE)
  await twain
    .producer<number, number>(input)
    .sendBatch(Array.from({ length: messages }, (_, i) => ({ key: i, value: i })))
  const writer = twain.processor<number, number>(input, { group: input, state: 'big', from: 'start' })
  let n = 0
  for await (const m of writer) {
    for (let k = 0; k < KEYS_PER_MESSAGE && m.value * KEYS_PER_MESSAGE + k < keys; k++)
      m.state.set(m.value * KEYS_PER_MESSAGE + k, k)
    m.ack()
    if (++n === messages) break
    // Buffered messages come on microtasks: a loop this busy must let timers run (heartbeats,
    // commits) or the member's session lapses (10 s of writes without a turn lost the lease).
    await new Promise((r) => setImmediate(r))
  }
  // Every write stored and committed before the writer goes (close() waits only drainTimeoutMs).
  for (;;) {
    await writer.commit()
    if ((await twain.describeGroup(input)).topics[0]?.committed === messages) break
    await sleep(50)
  }
  await writer.close()
  await twain.producer<number, number>(input).send(messages, -1)
  await twain.close()
  // A new instance, as a restarted process would be: the first message comes once the state is back.
  const fresh = await open(target)
  const t0 = process.hrtime.bigint()
  const reader = fresh.processor<number, number>(input, { group: input, state: 'big', from: 'start' })
  let size = -1
  for await (const m of reader) {
    size = m.state.size
    m.ack()
    break
  }
  const took = ms(t0)
  await reader.close()
  if (size !== keys) throw new Error(`restored ${size} keys of ${keys}`)
  const t1 = process.hrtime.bigint()
  let records = 0
  for await (const _ of fresh.history(`${input}-big-changelog`)) records++
  const history = ms(t1)
  if (records < keys) throw new Error(`the changelog holds ${records} records, fewer than ${keys} keys`)
  await fresh.deleteTopic(`${input}-big-changelog`)
  await fresh.deleteTopic(input)
  await fresh.close()
  return { restore: took, history }
}

async function rounds(backend: string, target: string, o: SuiteOptions, stateKeys: number): Promise<Row> {
  const row: Row = {
    backend,
    hand: [],
    windowed: [],
    joinHand: [],
    joinProc: [],
    restore: [],
    history: [],
    windows: 0,
    same: [],
  }
  const total = o.messages + PARTITIONS
  for (let r = 0; r < o.repeat; r++) {
    const tag = `[${backend} ${r + 1}/${o.repeat}]`
    const twain = await open(target)
    try {
      await sendClicks(twain, `clicks${r}`, o.messages)
      let t0 = process.hrtime.bigint()
      const hand = await handWindows(twain, `clicks${r}`, `hand${r}`, total)
      row.hand.push(ms(t0))
      t0 = process.hrtime.bigint()
      const eo = await exactlyOnceWindows(twain, `clicks${r}`, `counts${r}`, hand.length)
      row.windowed.push(ms(t0))
      row.windows = hand.length
      row.same.push(JSON.stringify([...hand].sort()) === JSON.stringify([...eo].sort()))

      await twain.createTopic('customers', { partitions: 3, keyType: 'string', compact: true })
      const tiers = twain.producer<string, string>('customers')
      for (let i = 0; i < CUSTOMERS; i += BATCH)
        await tiers.sendBatch(
          Array.from({ length: Math.min(BATCH, CUSTOMERS - i) }, (_, j) => ({
            key: `c${i + j}`,
            value: `t${(i + j) % 3}`,
          })),
        )
      await sendOrders(twain, `orders${r}`, o.messages)
      t0 = process.hrtime.bigint()
      await joinOrders(twain, `orders${r}`, o.messages, false)
      row.joinHand.push(ms(t0))
      t0 = process.hrtime.bigint()
      await joinOrders(twain, `orders${r}`, o.messages, true)
      row.joinProc.push(ms(t0))
      for (const t of [
        `clicks${r}`,
        `hand${r}`,
        `counts${r}`,
        `orders${r}`,
        `orders${r}-hand`,
        `orders${r}-eo`,
        'customers',
      ])
        await twain.deleteTopic(t)
      await twain.deleteTopic(`win-clicks${r}-w-changelog`).catch(() => undefined)
    } finally {
      await twain.close()
    }
    const rs = await restore(target, r, stateKeys)
    row.restore.push(rs.restore)
    row.history.push(rs.history)
    log(
      `${tag} windows: by hand ${fmtInt(rate(total, row.hand.at(-1) as number))}/s, windowed ${fmtInt(rate(total, row.windowed.at(-1) as number))}/s ` +
        `(${fmtInt(row.windows)} windows, ${row.same.at(-1) ? 'the same' : 'DIFFERENT'}); join: by hand ${fmtInt(rate(o.messages, row.joinHand.at(-1) as number))}/s, ` +
        `exactly once ${fmtInt(rate(o.messages, row.joinProc.at(-1) as number))}/s; restore of ${fmtInt(stateKeys)} keys ${fmtNum(rs.restore, 0)} ms, ` +
        `history of the changelog ${fmtNum(rs.history, 0)} ms`,
    )
  }
  return row
}

const suite: Suite = {
  name: 'processing',
  description: 'windowed counts, stream–table joins and a 1M-key state restore vs hand-written pipelines',
  async run(o: SuiteOptions): Promise<void> {
    const stateKeys = (o as SuiteOptions & { stateKeys?: number }).stateKeys ?? 1_000_000
    logRunHeader('processing', o.command)
    log(
      `setup:   ${o.repeat} round(s); ${fmtInt(o.messages)} clicks of ${USERS} users (10 s tumbling windows, 1 s lateness) and ${fmtInt(o.messages)} orders of ${fmtInt(CUSTOMERS)} customers, ${PARTITIONS} partitions; a state store of ${fmtInt(stateKeys)} keys`,
    )
    log('')
    const rows: Row[] = []
    const dir = makeTempDir('processing')
    try {
      rows.push(await rounds('file', dir, o, stateKeys))
    } finally {
      removeTempDir(dir)
    }
    const server = await RedisServer.start()
    try {
      rows.push(await rounds('redis', `redis://127.0.0.1:${server.port}`, o, stateKeys))
    } finally {
      await server.destroy()
    }
    log('')
    log('inputs per second and milliseconds, median of the rounds (ratio = median of the same-round ratios):')
    const table: string[][] = [
      [
        'backend',
        'a. windows by hand',
        'b. windowed',
        'b / a',
        'c. join by hand',
        'd. joinTable',
        'd / c',
        'e. restore ms',
        'f. history ms',
        'e / f',
      ],
    ]
    const goals: Array<[string, boolean, string]> = []
    const total = o.messages + PARTITIONS
    for (const r of rows) {
      const ba = r.hand.map((x, i) => x / (r.windowed[i] as number))
      const dc = r.joinHand.map((x, i) => x / (r.joinProc[i] as number))
      const ef = r.restore.map((x, i) => x / (r.history[i] as number))
      table.push([
        r.backend,
        fmtInt(rate(total, median(r.hand))),
        fmtInt(rate(total, median(r.windowed))),
        `${fmtNum(median(ba), 2)}×`,
        fmtInt(rate(o.messages, median(r.joinHand))),
        fmtInt(rate(o.messages, median(r.joinProc))),
        `${fmtNum(median(dc), 2)}×`,
        fmtNum(median(r.restore), 0),
        fmtNum(median(r.history), 0),
        `${fmtNum(median(ef), 2)}×`,
      ])
      goals.push([
        `${r.backend}: windowed count ≥ 0.5× the hand-written RxJS pipeline`,
        median(ba) >= 0.5,
        `${fmtNum(median(ba), 2)}×`,
      ])
      goals.push([
        `${r.backend}: restore of ${fmtInt(stateKeys)} keys ≤ 3× history() of them`,
        median(ef) <= 3,
        `${fmtNum(median(ef), 2)}×`,
      ])
      goals.push([
        `${r.backend}: the same windows and counts by hand and windowed()`,
        r.same.every(Boolean),
        `${fmtInt(r.windows)} windows`,
      ])
    }
    log(renderTable(table, [false, true, true, true, true, true, true, true, true, true]))
    log('')
    logGoals(goals)
  },
}

export default suite
