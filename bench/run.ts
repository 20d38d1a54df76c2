/*
 * Benchmark entry: `npm run bench -- <suite> [--messages n] [--size bytes] [--tail-messages n] [--repeat n]`
 * (the gateway suite also takes `--posts n`, `--readers n` and `--cpu-prof dir`; the scale suite
 * `--min n`, `--max n` and `--redis-max n`; the processing suite `--state-keys n`)
 * (or `npx tsx bench/run.ts <suite> …`). Each suite lives in bench/suites/<name>.ts and
 * default-exports a `Suite`; this file only parses options and dispatches.
 */
import { spawnSync } from 'node:child_process'
import { parseArgs } from 'node:util'
import type { Suite, SuiteOptions } from './lib/suite.js'

/** Known suites, loaded on demand so one suite's dependencies never slow down another. */
const SUITES: Record<
  string,
  { description: string; defaults?: Partial<typeof DEFAULTS>; load: () => Promise<{ default: Suite }> }
> = {
  file: {
    description: 'file backend: write/read throughput, read memory, cross-process tail latency vs plain Node',
    load: () => import('./suites/file.js'),
  },
  cluster: {
    description:
      'Redis Cluster: produce/read and server CPU per message vs one redis-server, scale-out over 1-3 masters',
    load: () => import('./suites/cluster.js'),
  },
  groups: {
    description: 'consumer groups: 3-member consume+ack vs history, failover after SIGKILL, join time',
    load: () => import('./suites/groups.js'),
  },
  redis: {
    description: 'Redis backend: produce/read throughput and tail latency vs raw ioredis on a private redis-server',
    load: () => import('./suites/redis.js'),
  },
  'redis-shared': {
    description:
      'Redis shared groups (competing consumers): consume+ack throughput vs BullMQ (addBulk + Worker, concurrency 50)',
    load: () => import('./suites/redis-shared.js'),
  },
  gateway: {
    description:
      'HTTP gateway (twainmq serve) vs @durable-streams/server file-backed: appends, catch-up read, append→SSE latency, SSE fan-out (defaults: --messages 100000 --repeat 3)',
    defaults: { messages: 100_000, repeat: 3 },
    load: () => import('./suites/gateway.js'),
  },
  peers: {
    description:
      'twainmq (file, Redis) vs NATS JetStream (file storage) on private servers: produce, backlog read, consume+ack, send → other-process latency (defaults: --messages 200000 --repeat 3)',
    defaults: { messages: 200_000, repeat: 3 },
    load: () => import('./suites/peers.js'),
  },
  floors: {
    description:
      "how far the missed rows of issue 15 can go: a promise-per-send producer vs the plain log; raw ioredis XREADGROUP + XACK and its reply decoder vs JetStream AckPolicy.All; a raw ioredis tail vs JetStream's (defaults: --messages 200000 --repeat 3)",
    defaults: { messages: 200_000, repeat: 3 },
    load: () => import('./suites/floors.js'),
  },
  scale: {
    description:
      'per-message produce/read/consume cost and RSS at 10k..10M messages (file; Redis to --redis-max), seek by offset and time, group join with deep history (defaults: --repeat 1 --min 10000 --max 10000000 --redis-max 1000000)',
    defaults: { repeat: 1 },
    load: () => import('./suites/scale.js'),
  },
  browser: {
    description:
      'twainmq/browser in headless Chromium: produce→render p50/p99 over loopback (file, Redis), gzipped bundle size vs @durable-streams/client + rxjs',
    load: () => import('./suites/browser.js'),
  },
  tabs: {
    description:
      'pages sharing one live read per stream (shareTabs) in Chromium: live reads for 10 pages, leader hand-over time, gaps and repeats (defaults: --repeat 3)',
    defaults: { repeat: 3 },
    load: () => import('./suites/tabs.js'),
  },
  state: {
    description:
      'StreamDB (@durable-streams/state) in Chromium over a compacted State Protocol stream vs the same events uncompacted: bytes and time to the first complete render (defaults: --messages 1000000 --repeat 1)',
    defaults: { messages: 1_000_000, repeat: 1 },
    load: () => import('./suites/state.js'),
  },
  ids: {
    description:
      'idempotent sends (send with an id) vs plain sends on file and Redis, and the same ids sent again (defaults: --messages 100000 --repeat 3)',
    defaults: { messages: 100_000, repeat: 3 },
    load: () => import('./suites/ids.js'),
  },
  processor: {
    description:
      'exactly-once processor (twain.processor + m.send) vs consumer + producer and a hand-written dedup, 1 and 0/1/3 outputs per input, file and Redis (defaults: --messages 100000 --repeat 3)',
    defaults: { messages: 100_000, repeat: 3 },
    load: () => import('./suites/processor.js'),
  },
  telemetry: {
    description:
      'OpenTelemetry cost on the file backend: produce and consume with telemetry off, the SDK on (no-op export), and sends inside a span, same run (defaults: --messages 200000 --repeat 3)',
    defaults: { messages: 200_000, repeat: 3 },
    load: () => import('./suites/telemetry.js'),
  },
  processing: {
    description:
      'stateful processing: a windowed count and a stream–table join (exactly once) vs the same pipelines written by hand (RxJS, at-least-once, in memory), and a state store of 1,000,000 keys restored vs history() of it, file and Redis (defaults: --messages 200000 --repeat 3 --state-keys 1000000)',
    defaults: { messages: 200_000, repeat: 3 },
    load: () => import('./suites/processing.js'),
  },
  tables: {
    description:
      "a table's ready() on a compacted topic (1,000,000 updates over 5,000 keys by default) vs history() over the updates before compaction, file and Redis (defaults: --messages 1000000 --repeat 1)",
    defaults: { repeat: 1 },
    load: () => import('./suites/tables.js'),
  },
  twainmq: {
    description: 'Python TwainMQ format: write/read vs the native format and vs a python3 re-creation of TwainMQ',
    load: () => import('./suites/twainmq.js'),
  },
}

const DEFAULTS = {
  messages: 1_000_000,
  size: 100,
  tailMessages: 300,
  repeat: 3,
  posts: 1000,
  readers: 1000,
  min: 10_000,
  max: 10_000_000,
  redisMax: 1_000_000,
  stateKeys: 1_000_000,
}

function usage(): string {
  const suites = Object.entries(SUITES)
    .map(([name, s]) => `  ${name.padEnd(12)} ${s.description}`)
    .join('\n')
  return [
    'usage: npm run bench -- <suite> [options]',
    '       npx tsx bench/run.ts <suite> [options]',
    '',
    'suites:',
    suites,
    '',
    'options:',
    `  --messages <n>       messages per throughput phase (default ${DEFAULTS.messages.toLocaleString('en-US')})`,
    `  --size <bytes>       value size in bytes (default ${DEFAULTS.size})`,
    `  --tail-messages <n>  messages per tail-latency run (default ${DEFAULTS.tailMessages})`,
    `  --repeat <n>         rounds of the throughput phases; the median round is reported (default ${DEFAULTS.repeat})`,
    `  --posts <n>          gateway: sequential single-item POSTs (default ${DEFAULTS.posts.toLocaleString('en-US')})`,
    `  --readers <n>        gateway: concurrent SSE readers in the fan-out phase (default ${DEFAULTS.readers.toLocaleString('en-US')})`,
    '  --cpu-prof <dir>     gateway: write a V8 CPU profile of the twainmq serve process into <dir>',
    `  --min <n>            scale: smallest log size (default ${DEFAULTS.min.toLocaleString('en-US')}); sizes are decades from --min to --max`,
    `  --max <n>            scale: largest log size on the file backend (default ${DEFAULTS.max.toLocaleString('en-US')})`,
    `  --redis-max <n>      scale: largest log size on Redis (default ${DEFAULTS.redisMax.toLocaleString('en-US')})`,
    `  --state-keys <n>     processing: keys of the state store restored (default ${DEFAULTS.stateKeys.toLocaleString('en-US')})`,
    '  -h, --help           this help',
  ].join('\n')
}

class UsageError extends Error {}

function intOption(name: string, text: string | undefined, fallback: number, min: number, max: number): number {
  if (text === undefined) return fallback
  const v = Number(text.replace(/_/g, ''))
  if (!Number.isInteger(v) || v < min || v > max)
    throw new UsageError(`--${name} must be an integer ${min}..${max}, got ${JSON.stringify(text)}`)
  return v
}

/** What `parse` gives a suite: the common options, and the gateway suite's own (the others ignore them). */
type ParsedOptions = Omit<SuiteOptions, 'command'> & {
  posts: number
  readers: number
  cpuProf: string | undefined
  min: number
  max: number
  redisMax: number
  stateKeys: number
}

function parse(argv: string[]): { suite: string | undefined; options: ParsedOptions; help: boolean } {
  let parsed
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        messages: { type: 'string' },
        size: { type: 'string' },
        'tail-messages': { type: 'string' },
        repeat: { type: 'string' },
        posts: { type: 'string' },
        readers: { type: 'string' },
        'cpu-prof': { type: 'string' },
        min: { type: 'string' },
        max: { type: 'string' },
        'redis-max': { type: 'string' },
        'state-keys': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    })
  } catch (e) {
    throw new UsageError((e as Error).message)
  }
  const { values, positionals } = parsed
  if (positionals.length > 1) throw new UsageError(`one suite at a time, got ${positionals.join(' ')}`)
  const d = { ...DEFAULTS, ...(positionals[0] === undefined ? {} : SUITES[positionals[0]]?.defaults) }
  return {
    suite: positionals[0],
    help: values.help === true,
    options: {
      messages: intOption('messages', values.messages, d.messages, 1, 100_000_000),
      size: intOption('size', values.size, d.size, 1, 512 * 1024),
      tailMessages: intOption('tail-messages', values['tail-messages'], d.tailMessages, 1, 100_000),
      repeat: intOption('repeat', values.repeat, d.repeat, 1, 100),
      posts: intOption('posts', values.posts, d.posts, 1, 10_000_000),
      readers: intOption('readers', values.readers, d.readers, 1, 10_000),
      cpuProf: values['cpu-prof'],
      min: intOption('min', values.min, d.min, 1, 100_000_000),
      max: intOption('max', values.max, d.max, 1, 100_000_000),
      redisMax: intOption('redis-max', values['redis-max'], d.redisMax, 1, 100_000_000),
      stateKeys: intOption('state-keys', values['state-keys'], d.stateKeys, 1, 100_000_000),
    },
  }
}

async function main(): Promise<number> {
  let args
  try {
    args = parse(process.argv.slice(2))
  } catch (e) {
    if (!(e instanceof UsageError)) throw e
    process.stderr.write(`error: ${e.message}\n\n${usage()}\n`)
    return 2
  }
  if (args.help) {
    process.stdout.write(usage() + '\n')
    return 0
  }
  const entry = args.suite === undefined ? undefined : SUITES[args.suite]
  if (!entry) {
    process.stderr.write(
      `${args.suite === undefined ? 'error: no suite given' : `error: unknown suite ${JSON.stringify(args.suite)}`}\n\n${usage()}\n`,
    )
    return 2
  }
  const o = args.options
  const given = process.argv.slice(2).join(' ')
  const via =
    process.env.npm_lifecycle_event === 'bench' ? `npm run bench -- ${given}` : `npx tsx bench/run.ts ${given}`
  const own =
    args.suite === 'gateway'
      ? ` --posts ${o.posts} --readers ${o.readers}${o.cpuProf === undefined ? '' : ` --cpu-prof ${o.cpuProf}`}`
      : args.suite === 'scale'
        ? ` --min ${o.min} --max ${o.max} --redis-max ${o.redisMax}`
        : args.suite === 'processing'
          ? ` --state-keys ${o.stateKeys}`
          : ''
  const full = `npx tsx bench/run.ts ${args.suite} --messages ${o.messages} --size ${o.size} --tail-messages ${o.tailMessages} --repeat ${o.repeat}${own}`
  const command = via.trim() === full ? full : `${via.trim()}   (= ${full})`
  const suite = (await entry.load()).default
  await suite.run({ ...o, command })
  return 0
}

/**
 * Memory measurements start from a full GC, which needs --expose-gc: without it, run this same
 * command once more in a child node with the flag (and tsx's loader flags, kept in execArgv).
 */
function reexecWithGc(): number | undefined {
  if (typeof (globalThis as { gc?: unknown }).gc === 'function' || process.env.TWAINMQ_BENCH_REEXEC === '1')
    return undefined
  const r = spawnSync(process.execPath, ['--expose-gc', ...process.execArgv, ...process.argv.slice(1)], {
    stdio: 'inherit',
    env: { ...process.env, TWAINMQ_BENCH_REEXEC: '1' },
  })
  if (r.error) throw r.error
  return r.status ?? 1
}

const reexec = reexecWithGc()
if (reexec !== undefined) process.exitCode = reexec
else
  main().then(
    (code) => {
      process.exitCode = code
    },
    (e: unknown) => {
      process.stderr.write(`bench failed: ${(e as Error)?.stack ?? String(e)}\n`)
      process.exitCode = 1
    },
  )
