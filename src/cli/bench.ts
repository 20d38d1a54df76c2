import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import cliProgress from 'cli-progress'
import { Option, type Command } from 'commander'
import { open, parseTarget, type Twain } from '../index.js'
import {
  consumePhase,
  producePhase,
  readPhase,
  tailPhase,
  type BenchPlan,
  type PhaseResult,
  type Progress,
} from './bench-phases.js'
import { formatOption, intOption } from './arguments.js'
import { UsageError, type GlobalOptions } from './context.js'

interface BenchCliOptions {
  messages: number
  size: number
  partitions: number
  tailMessages: number
  format: 'json' | 'text'
}

const KINDS = ['file', 'redis', 'cluster'] as const

/**
 * `twainmq bench [file|redis|cluster]`: measure the store `--url` names (for `file` without `--url`,
 * a temporary directory): produce, read, consume+ack and tail latency on a temporary topic that is
 * deleted afterwards (also on Ctrl-C). A progress bar on stderr when it is a terminal; the table
 * (or JSON) on stdout.
 */
export function registerBench(program: Command): void {
  program
    .command('bench')
    .description(
      'benchmark a store: produce, read, consume+ack msgs/s and tail latency p50/p99/max, on a temporary topic',
    )
    .addArgument(
      program
        .createArgument(
          '[kind]',
          'file, redis or cluster (default: the kind of --url; file in a temporary directory without --url)',
        )
        .choices(KINDS),
    )
    .addOption(
      new Option('--messages <n>', 'messages to produce, read and consume')
        .argParser(intOption(1, 100_000_000))
        .default(100_000),
    )
    .addOption(new Option('--size <bytes>', 'value size in bytes').argParser(intOption(1, 1_000_000)).default(100))
    .addOption(
      new Option('--partitions <p>', 'partitions of the temporary topic').argParser(intOption(1, 10_000)).default(4),
    )
    .addOption(
      new Option('--tail-messages <n>', 'messages sent one at a time for tail latency')
        .argParser(intOption(1, 100_000))
        .default(1000),
    )
    .addOption(new Option('--format <format>', 'json or text').argParser(formatOption).default('text'))
    .action(async (kind: (typeof KINDS)[number] | undefined, opts: BenchCliOptions, cmd: Command) => {
      const g = cmd.optsWithGlobals<GlobalOptions>()
      const store = resolveStore(kind, g.url)
      const plan: BenchPlan = {
        messages: opts.messages,
        size: opts.size,
        partitions: opts.partitions,
        tailMessages: opts.tailMessages,
      }
      const twain = await open(store.target, g.prefix === undefined ? {} : { prefix: g.prefix })
      const results = await runBench(twain, plan, progressBar()).finally(() => twain.close().finally(store.cleanup))
      process.stdout.write(
        opts.format === 'json'
          ? JSON.stringify({ store: store.label, ...plan, results }) + '\n'
          : table(store.label, plan, results),
      )
    })
}

/** Where to benchmark, and what to remove afterwards. */
function resolveStore(
  kind: (typeof KINDS)[number] | undefined,
  url: string | undefined,
): { target: string; label: string; cleanup: () => void } {
  if (url === undefined || url === '') {
    if (kind === 'redis' || kind === 'cluster')
      throw new UsageError(
        `bench ${kind} needs --url (e.g. ${kind === 'redis' ? 'redis://127.0.0.1:6379' : 'redis+cluster://127.0.0.1:7000'}) or TWAINMQ_URL`,
      )
    const dir = mkdtempSync(join(tmpdir(), 'twainmq-bench-'))
    return {
      target: dir,
      label: `file ${dir} (temporary)`,
      cleanup: () => rmSync(dir, { recursive: true, force: true }),
    }
  }
  const t = parseTarget(url)
  const actual = t.kind === 'file' ? 'file' : t.cluster ? 'cluster' : 'redis'
  if (kind !== undefined && kind !== actual)
    throw new UsageError(`bench ${kind} but --url ${JSON.stringify(url)} is a ${actual} store`)
  return { target: url, label: `${actual} ${t.kind === 'file' ? t.root : url}`, cleanup: () => undefined }
}

/** The four phases on a fresh topic, deleted afterwards (and on SIGINT/SIGTERM). */
async function runBench(twain: Twain, plan: BenchPlan, progress: Progress): Promise<PhaseResult[]> {
  const topic = `bench-${randomBytes(5).toString('hex')}`
  await twain.createTopic(topic, { partitions: plan.partitions, keyType: 'u32' })
  const interrupted = (signal: NodeJS.Signals) => {
    progress.stop()
    process.stderr.write(`\nbench interrupted (${signal}): deleting topic ${topic}\n`)
    void twain
      .deleteTopic(topic)
      .catch(() => undefined)
      .finally(() => process.exit(130))
  }
  process.once('SIGINT', interrupted).once('SIGTERM', interrupted)
  try {
    const out: PhaseResult[] = []
    for (const phase of [producePhase, readPhase, consumePhase, tailPhase])
      out.push(await phase(twain, topic, plan, progress))
    return out
  } finally {
    process.off('SIGINT', interrupted).off('SIGTERM', interrupted)
    await twain.deleteTopic(topic)
  }
}

function progressBar(): Progress {
  if (!process.stderr.isTTY) return { start: () => undefined, tick: () => undefined, stop: () => undefined }
  let bar: cliProgress.SingleBar | undefined
  return {
    start(phase, total) {
      bar = new cliProgress.SingleBar(
        {
          format: `  ${phase.padEnd(12)} [{bar}] {percentage}% | {value}/{total} | {duration_formatted}`,
          hideCursor: true,
          clearOnComplete: true,
          fps: 10,
          stream: process.stderr,
        },
        cliProgress.Presets.shades_classic,
      )
      bar.start(total, 0)
    },
    tick: (done) => bar?.update(done),
    stop() {
      bar?.stop()
      bar = undefined
    },
  }
}

const num = (v: number, digits = 0) =>
  v.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })

function table(label: string, plan: BenchPlan, results: PhaseResult[]): string {
  const rows = [['phase', 'messages', 'seconds', 'msgs/s', 'MB/s', 'p50 ms', 'p99 ms', 'max ms']]
  for (const r of results) {
    rows.push([
      r.phase,
      num(r.messages),
      num(r.seconds, 2),
      num(r.rate),
      r.mbPerSec === undefined ? '' : num(r.mbPerSec, 1),
      r.p50Ms === undefined ? '' : num(r.p50Ms, 2),
      r.p99Ms === undefined ? '' : num(r.p99Ms, 2),
      r.maxMs === undefined ? '' : num(r.maxMs, 2),
    ])
  }
  const widths = (rows[0] as string[]).map((_, c) => Math.max(...rows.map((r) => (r[c] as string).length)))
  const line = (r: string[]) =>
    r
      .map((cell, c) => (c === 0 ? cell.padEnd(widths[c] as number) : cell.padStart(widths[c] as number)))
      .join('  ')
      .trimEnd()
  const head = `twainmq bench: ${label}, ${num(plan.messages)} messages of ${plan.size} bytes, ${plan.partitions} partition${plan.partitions === 1 ? '' : 's'}\n`
  return head + rows.map(line).join('\n') + '\n'
}
