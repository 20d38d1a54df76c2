/*
 * `npm run bench -- processor`: one pipeline, read topic `in` (4 partitions), write topic `out`
 * (4 partitions), on the file backend and on a private redis-server, three ways alternating in the
 * same round:
 *
 *   a. at-least-once: `twain.consumer` + `twain.producer('out')`; per input, `producer.send` of
 *      each output, the input acked once its outputs are stored
 *   b. exactly-once: `twain.processor` + `m.send` of each output, then `m.ack()` (which takes effect
 *      once the outputs are stored)
 *   c. hand-written dedup: a's consumer + producer, each output with a header naming its input
 *      (partition, offset, output number) and sent to an explicit partition; on the first message
 *      the output topic is scanned for the highest input position stored per (output partition,
 *      input partition), and an output at or below it is skipped
 *   d. (batch idiom only) a with a promise per output: `producer.send` of each output of the batch,
 *      `b.ack()` once all are stored. `m.send` returns a promise per output (DESIGN §3.11), as
 *      `send` does (§3.13): d is the at-least-once pipeline under that contract, so b / d tells
 *      what exactly-once costs beyond it, where b / a also counts `sendBatch`'s one promise per batch
 *
 * Two shapes: `map` (one output per input) and `enrich` (an enrichment with a filter: inputs give
 * 0, 1 or 3 outputs in turn, 4/3 on average); two idioms: `each` (`for await` over the member, each
 * output sent as it comes, nothing awaited in the loop) and `batch` (`pipe(member, batch({ size: 500,
 * maxWaitMs: 5 }))`; a and c `sendBatch` the batch's outputs and `b.ack()` once stored, b `m.send`s
 * each output then `b.ack()`s). Rates are inputs per second, timed from the first input delivered
 * until every output is stored and the last input's ack committed.
 */
import { open, type Twain } from '../../src/index.js'
import { batch, pipe, type MessageBatch, type Settleable } from '../../src/operators/index.js'
import { RedisServer } from '../../test/helpers/redis-server.js'
import { CHUNK } from '../lib/phases.js'
import { progress } from '../lib/progress.js'
import { log, logGoals, logRunHeader, makeValue } from '../lib/report.js'
import { fmtInt, fmtNum, median } from '../lib/stats.js'
import type { Suite, SuiteOptions } from '../lib/suite.js'
import { renderTable } from '../lib/table.js'
import { makeTempDir, removeTempDir } from '../lib/tmp.js'

const PARTITIONS = 4
/** The header of an output in pipeline c: `<input partition> <input offset> <output number>`. */
const FROM = 'x-from'

type Shape = 'map' | 'enrich'
type Idiom = 'each' | 'batch'
type Way = 'a' | 'b' | 'c' | 'd'
/** The batch idiom's `batch()` options. */
const BATCH = { size: 500, maxWaitMs: 5 }

/** How many outputs input number `i` gives. */
const outputsOf = (shape: Shape, i: number): number => (shape === 'map' ? 1 : i % 3 === 2 ? 3 : i % 3)

/** Output `j` of an input with key `key`. */
const outKey = (key: number, j: number): number => (key + j * 7919) % 65536

/** Fill `topic` with `n` inputs, keys 0..65535 in turn (not timed). */
export async function fill(twain: Twain, topic: string, n: number, value: string): Promise<void> {
  const p = twain.producer<string>(topic)
  for (let i = 0; i < n; i += CHUNK) {
    const m = Math.min(CHUNK, n - i)
    const items = new Array<{ key: number; value: string }>(m)
    for (let j = 0; j < m; j++) items[j] = { key: (i + j) % 65536, value }
    await p.sendBatch(items)
  }
  await p.close()
}

/** Counts the inputs whose outputs are all stored; `done` resolves at `n`, `failed` on the first failure. */
class Tally {
  finished = 0
  outputs = 0
  skipped = 0
  readonly done: Promise<void>
  private resolve!: () => void
  private reject!: (e: unknown) => void

  constructor(private readonly n: number) {
    this.done = new Promise<void>((res, rej) => {
      this.resolve = res
      this.reject = rej
    })
    if (n === 0) this.resolve()
  }

  finish(): void {
    if (++this.finished === this.n) this.resolve()
  }

  fail(e: unknown): void {
    this.reject(e)
  }
}

/** Messages as the pipelines see them. */
interface In extends Settleable {
  key: number
  value: string
  partition: number
  offset: number
}

/** After an input's `k` outputs are stored: `then` (the input's ack, where the pipeline acks itself). */
function whenAll(k: number, then: () => void): () => void {
  let left = k
  return () => {
    if (--left === 0) then()
  }
}

/** Highest stored input position per (output partition, input partition), read from `out`'s outputs. */
async function scanHighWater(twain: Twain, out: string): Promise<Map<number, [number, number]>[]> {
  const hw = Array.from({ length: PARTITIONS }, () => new Map<number, [number, number]>())
  for await (const m of twain.history<string>(out)) {
    const h = m.headers[FROM]
    if (h === undefined) continue
    const [p, o, s] = h.split(' ').map(Number) as [number, number, number]
    const at = hw[m.partition] as Map<number, [number, number]>
    const was = at.get(p)
    if (was === undefined || o > was[0] || (o === was[0] && s > was[1])) at.set(p, [o, s])
  }
  return hw
}

/** One pipeline run over `n` inputs of `input`; the rate in inputs/s. */
export async function pipeline(
  twain: Twain,
  way: Way,
  shape: Shape,
  idiom: Idiom,
  input: string,
  out: string,
  n: number,
  tag: string,
): Promise<{ rate: number; outputs: number }> {
  const label = `${way}. ${{ a: 'consumer + producer', b: 'processor + m.send', c: 'hand-written dedup', d: 'consumer + producer.send' }[way]} (${shape}, ${idiom})`
  const bar = progress(`${tag} ${label}`, n)
  const group = `g-${way}-${shape}-${idiom}-${input}`
  const tally = new Tally(n)
  const c =
    way === 'b'
      ? twain.processor<string, number>(input, { group, name: `${group}-1` })
      : twain.consumer<string, number>(input, { group, name: `${group}-1` })
  const p = twain.producer<string>(out)
  let hw: Map<number, [number, number]>[] | undefined
  let got = 0
  let t0 = 0
  const fail = (e: unknown): void => tally.fail(e)
  /** c: whether output `j` of `m` is stored already (at or below its output partition's mark). */
  const seen = (m: In, q: number, j: number): boolean => {
    const mark = (hw as Map<number, [number, number]>[])[q]?.get(m.partition)
    return mark !== undefined && (m.offset < mark[0] || (m.offset === mark[0] && j <= mark[1]))
  }
  const started = async (): Promise<void> => {
    t0 = performance.now()
    if (way === 'c') hw = await scanHighWater(twain, out)
  }
  if (idiom === 'each') {
    for await (const msg of c) {
      if (got === 0) await started()
      const m = msg as unknown as In
      const k = outputsOf(shape, m.offset)
      if (way === 'b') {
        const pm = msg as unknown as { send(topic: string, key: number, value: string): Promise<unknown> }
        const stored = whenAll(k, () => tally.finish())
        for (let j = 0; j < k; j++) pm.send(out, outKey(m.key, j), m.value).then(stored, fail)
        m.ack()
        if (k === 0) tally.finish()
      } else {
        const acked = (): void => {
          m.ack()
          tally.finish()
        }
        if (k === 0) acked()
        else {
          const stored = whenAll(k, acked)
          for (let j = 0; j < k; j++) {
            const key = outKey(m.key, j)
            if (way === 'a' || way === 'd') {
              p.send(key, m.value).then(stored, fail)
              continue
            }
            const q = key % PARTITIONS
            if (seen(m, q, j)) {
              tally.skipped++
              stored()
              continue
            }
            p.send(key, m.value, { partition: q, headers: { [FROM]: `${m.partition} ${m.offset} ${j}` } }).then(
              stored,
              fail,
            )
          }
        }
      }
      tally.outputs += k
      if ((++got & 0x3fff) === 0) bar.update(got)
      if (got >= n) break
    }
  } else {
    for await (const b of pipe<In, MessageBatch<In>>(c as AsyncIterable<In>, batch<In>(BATCH))) {
      if (got === 0) await started()
      const take = Math.min(b.length, n - got)
      if (way === 'b') {
        let left = 1
        const stored = (): void => {
          if (--left === 0) for (let i = 0; i < take; i++) tally.finish()
        }
        for (let i = 0; i < take; i++) {
          const m = b[i] as In
          const k = outputsOf(shape, m.offset)
          const pm = m as unknown as { send(topic: string, key: number, value: string): Promise<unknown> }
          for (let j = 0; j < k; j++) {
            left++
            pm.send(out, outKey(m.key, j), m.value).then(stored, fail)
          }
          tally.outputs += k
        }
        b.ack()
        stored()
      } else if (way === 'd') {
        let left = 1
        const stored = (): void => {
          if (--left !== 0) return
          b.ack()
          for (let i = 0; i < take; i++) tally.finish()
        }
        for (let i = 0; i < take; i++) {
          const m = b[i] as In
          const k = outputsOf(shape, m.offset)
          for (let j = 0; j < k; j++) {
            left++
            p.send(outKey(m.key, j), m.value).then(stored, fail)
          }
          tally.outputs += k
        }
        stored()
      } else {
        const items: Array<{ key: number; value: string; partition?: number; headers?: Record<string, string> }> = []
        for (let i = 0; i < take; i++) {
          const m = b[i] as In
          const k = outputsOf(shape, m.offset)
          tally.outputs += k
          for (let j = 0; j < k; j++) {
            const key = outKey(m.key, j)
            if (way === 'a') items.push({ key, value: m.value })
            else {
              const q = key % PARTITIONS
              if (seen(m, q, j)) tally.skipped++
              else
                items.push({
                  key,
                  value: m.value,
                  partition: q,
                  headers: { [FROM]: `${m.partition} ${m.offset} ${j}` },
                })
            }
          }
        }
        const acked = (): void => {
          b.ack()
          for (let i = 0; i < take; i++) tally.finish()
        }
        if (items.length === 0) acked()
        else p.sendBatch(items).then(acked, fail)
      }
      got += take
      bar.update(got)
      if (got >= n) break
    }
  }
  await tally.done
  await c.commit()
  const seconds = (performance.now() - t0) / 1000
  bar.stop()
  await c.close()
  await p.close()
  const rate = n / seconds
  log(
    `  ${label.padEnd(44)} ${fmtNum(seconds, 2).padStart(7)} s  ${fmtInt(rate).padStart(10)} inputs/s  ${fmtInt(tally.outputs).padStart(9)} outputs`,
  )
  if (tally.skipped !== 0) throw new Error(`${label}: ${tally.skipped} outputs skipped as already stored (none were)`)
  return { rate, outputs: tally.outputs }
}

interface Row {
  backend: string
  shape: Shape
  idiom: Idiom
  a: number[]
  b: number[]
  c: number[]
  /** The batch idiom's only (empty in the `each` idiom, whose pipeline a sends one output at a time already). */
  d: number[]
  /** Per round: outputs stored in `out` by each way, and the expected count. */
  stored: Array<{ a: number; b: number; c: number; d?: number; expected: number }>
}

async function rounds(backend: string, target: string, o: SuiteOptions, value: string): Promise<Row[]> {
  const twain = await open(target)
  const rows: Row[] = (['map', 'enrich'] as const).flatMap((shape) =>
    (['each', 'batch'] as const).map((idiom) => ({ backend, shape, idiom, a: [], b: [], c: [], d: [], stored: [] })),
  )
  try {
    for (let r = 0; r < o.repeat; r++) {
      const tag = `[${backend} ${r + 1}/${o.repeat}]`
      for (const row of rows) {
        const input = `in-${row.shape}-${row.idiom}${r}`
        await twain.createTopic(input, { partitions: PARTITIONS, keyType: 'u32' })
        await fill(twain, input, o.messages, value)
        const counts: Row['stored'][number] = { a: 0, b: 0, c: 0, expected: 0 }
        // The ways alternate within the round, so all see the same machine.
        const ways: Way[] = row.idiom === 'batch' ? ['a', 'b', 'c', 'd'] : ['a', 'b', 'c']
        for (const way of ways) {
          const out = `out-${row.shape}-${row.idiom}${r}-${way}`
          await twain.createTopic(out, { partitions: PARTITIONS, keyType: 'u32' })
          const { rate, outputs } = await pipeline(twain, way, row.shape, row.idiom, input, out, o.messages, tag)
          row[way].push(rate)
          counts[way] = await twain.length(out)
          counts.expected = outputs
        }
        row.stored.push(counts)
      }
    }
  } finally {
    await twain.close()
  }
  return rows
}

const suite: Suite = {
  name: 'processor',
  description: 'exactly-once processor vs consumer + producer and a hand-written dedup, file and Redis',
  async run(o: SuiteOptions): Promise<void> {
    logRunHeader('processor', o.command)
    log(
      `setup:   ${o.repeat} round(s) of ${fmtInt(o.messages)} inputs of ${o.size} B values per pipeline; in and out ${PARTITIONS} partitions; one group member; map = 1 output per input, enrich = 0/1/3 in turn; each = for await, batch = batch(${JSON.stringify(BATCH).replace(/"/g, '')})`,
    )
    const value = makeValue(o.size)
    const rows: Row[] = []
    const dir = makeTempDir('processor')
    try {
      rows.push(...(await rounds('file', dir, o, value)))
    } finally {
      removeTempDir(dir)
    }
    const server = await RedisServer.start()
    try {
      log(`redis:   private redis-server on 127.0.0.1:${server.port}`)
      rows.push(...(await rounds('redis', `redis://127.0.0.1:${server.port}`, o, value)))
    } finally {
      await server.destroy()
    }
    log('')
    log('throughput, inputs/s, median of the rounds (ratio = median of the same-round ratios):')
    const table: string[][] = [
      [
        'backend',
        'pipeline',
        'idiom',
        'a. at-least-once',
        'b. exactly-once',
        'b / a',
        'c. hand-written dedup',
        'b / c',
        'd. a, a promise per output',
        'b / d',
      ],
    ]
    const goals: Array<[string, boolean, string]> = []
    for (const r of rows) {
      const ba = median(r.b.map((x, i) => x / (r.a[i] as number)))
      const bc = median(r.b.map((x, i) => x / (r.c[i] as number)))
      const bd = r.d.length === 0 ? undefined : median(r.b.map((x, i) => x / (r.d[i] as number)))
      table.push([
        r.backend,
        r.shape,
        r.idiom,
        fmtInt(median(r.a)),
        fmtInt(median(r.b)),
        `${fmtNum(ba, 2)}×`,
        fmtInt(median(r.c)),
        `${fmtNum(bc, 2)}×`,
        bd === undefined ? '—' : fmtInt(median(r.d)),
        bd === undefined ? '—' : `${fmtNum(bd, 2)}×`,
      ])
      goals.push([
        `${r.backend} ${r.shape} ${r.idiom}: exactly-once ≥ 0.8× at-least-once`,
        ba >= 0.8,
        `${fmtNum(ba, 2)}×`,
      ])
      const wrong = r.stored.filter(
        (s) => s.a !== s.expected || s.b !== s.expected || s.c !== s.expected || (s.d ?? s.expected) !== s.expected,
      )
      const total = r.stored.reduce((t, s) => t + s.expected, 0)
      goals.push([
        `${r.backend} ${r.shape} ${r.idiom}: every output stored once by each pipeline`,
        wrong.length === 0,
        wrong.length === 0
          ? `${fmtInt(total)} outputs each`
          : wrong
              .map((s) => `a ${s.a}, b ${s.b}, c ${s.c}${s.d === undefined ? '' : `, d ${s.d}`} of ${s.expected}`)
              .join('; '),
      ])
    }
    log(renderTable(table, [false, false, false, true, true, true, true, true, true, true]))
    log('')
    logGoals(goals)
  },
}

export default suite
