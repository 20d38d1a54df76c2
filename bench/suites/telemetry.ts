/*
 * `npm run bench -- telemetry`: the cost of OpenTelemetry on the file backend, same run, rounds
 * alternating the configurations so each sees the same machine:
 *
 *   off    open({ telemetry: false }) (what an application without @opentelemetry/api gets)
 *   sdk    the SDK on (BasicTracerProvider + BatchSpanProcessor, a MeterProvider with a reader),
 *          both exporting to nothing; sends made outside any span (no header added)
 *   timed  sdk, and `processDuration: true` (a histogram record per message consumed)
 *   span   sdk, every send made inside an active span (each message carries a traceparent, so
 *          each is consumed in a process span with a parent and a link)
 *
 * Phases: produce (Promise.all of 1000 producer.send calls at a time), consume (one partitioned
 * member iterating and acking everything, then committing). Ratios are against `off` of the same round.
 */
import { context, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics'
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base'
import { open, type Twain } from '../../src/index.js'
import { consumeGroup, produceAll, rate } from '../lib/phases.js'
import { log, logGoals, logRunHeader, makeValue } from '../lib/report.js'
import { fmtInt, fmtNum, median } from '../lib/stats.js'
import type { Suite, SuiteOptions } from '../lib/suite.js'
import { renderTable } from '../lib/table.js'
import { makeTempDir, removeTempDir } from '../lib/tmp.js'

/** Exports nothing, at once. */
const NOOP_EXPORTER: SpanExporter = {
  export: (_spans, done) => done({ code: 0 }),
  shutdown: async () => undefined,
}

/** A reader never collected: instruments record into the SDK's aggregations, nothing reads them. */
class IdleReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

type Config = 'off' | 'sdk' | 'timed' | 'span'
const CONFIGS: Config[] = ['off', 'sdk', 'timed', 'span']

interface Sdk {
  tracerProvider: BasicTracerProvider
  meterProvider: MeterProvider
}

async function openAs(config: Config, dir: string, sdk: Sdk): Promise<Twain> {
  return config === 'off'
    ? open(dir, { telemetry: false })
    : open(dir, {
        telemetry: {
          tracerProvider: sdk.tracerProvider,
          meterProvider: sdk.meterProvider,
          processDuration: config === 'timed',
        },
      })
}

async function round(
  config: Config,
  dir: string,
  sdk: Sdk,
  o: SuiteOptions,
  value: string,
  tag: string,
): Promise<{ produce: number; consume: number }> {
  const twain = await openAs(config, dir, sdk)
  try {
    const topic = `t-${config}-${tag.replace(/\W+/g, '')}`
    await twain.createTopic(topic, { partitions: 1 })
    const produce = () => produceAll(twain, topic, o.messages, value, tag, `${config}: produce`)
    const p =
      config === 'span'
        ? await trace.getTracer('bench').startActiveSpan('request', async (span) => {
            try {
              return await produce()
            } finally {
              span.end()
            }
          })
        : await produce()
    const c = await consumeGroup(twain, topic, `g-${topic}`, 'partitioned', o.messages, tag, `${config}: consume`)
    return { produce: rate(p), consume: rate(c) }
  } finally {
    await twain.close()
  }
}

const suite: Suite = {
  name: 'telemetry',
  description: 'OpenTelemetry cost: produce and consume with telemetry off, the SDK on, and sends inside a span',
  async run(o: SuiteOptions): Promise<void> {
    logRunHeader('telemetry', o.command)
    log(
      `setup:   ${o.repeat} round(s) of ${fmtInt(o.messages)} messages of ${o.size} B per phase, file backend, 1 partition`,
    )
    log('')
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
    const tracerProvider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(NOOP_EXPORTER)] })
    trace.setGlobalTracerProvider(tracerProvider)
    const meterProvider = new MeterProvider({ readers: [new IdleReader()] })
    const sdk = { tracerProvider, meterProvider }
    const value = makeValue(o.size)
    const rates = new Map<Config, Array<{ produce: number; consume: number }>>(CONFIGS.map((c) => [c, []]))
    const dir = makeTempDir('telemetry')
    try {
      // A warm-up round (not counted), then the rounds, each in another order (no configuration always first).
      for (const config of CONFIGS)
        await round(config, dir, sdk, { ...o, messages: Math.min(o.messages, 20_000) }, value, '[warm-up]')
      for (let r = 0; r < o.repeat; r++)
        for (let k = 0; k < CONFIGS.length; k++) {
          const config = CONFIGS[(k + r) % CONFIGS.length] as Config
          rates.get(config)?.push(await round(config, dir, sdk, o, value, `[${r + 1}/${o.repeat}]`))
        }
    } finally {
      removeTempDir(dir)
      await tracerProvider.shutdown()
      await meterProvider.shutdown()
    }
    const off = rates.get('off') ?? []
    const ratio = (c: Config, phase: 'produce' | 'consume') =>
      median((rates.get(c) ?? []).map((x, i) => x[phase] / (off[i]?.[phase] ?? NaN)))
    log('')
    log('throughput, msgs/s, median of the rounds (ratio = median of the same-round ratios to off):')
    const table: string[][] = [['config', 'produce', 'vs off', 'consume', 'vs off']]
    for (const c of CONFIGS) {
      const rs = rates.get(c) ?? []
      table.push([
        c,
        fmtInt(median(rs.map((x) => x.produce))),
        `${fmtNum(ratio(c, 'produce'), 2)}×`,
        fmtInt(median(rs.map((x) => x.consume))),
        `${fmtNum(ratio(c, 'consume'), 2)}×`,
      ])
    }
    log(renderTable(table, [false, true, true, true, true]))
    log('')
    const goals: Array<[string, boolean, string]> = [
      ['sdk on: produce ≥ 0.85× off', ratio('sdk', 'produce') >= 0.85, `${fmtNum(ratio('sdk', 'produce'), 2)}×`],
      ['sdk on: consume ≥ 0.85× off', ratio('sdk', 'consume') >= 0.85, `${fmtNum(ratio('sdk', 'consume'), 2)}×`],
    ]
    logGoals(goals)
  },
}

export default suite
