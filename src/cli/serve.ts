import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { InvalidArgumentError as CommanderArgError, Option, type Command } from 'commander'
import { createGateway, TokenAuth } from '../gateway/index.js'
import { prometheusMetrics } from '../prometheus/index.js'
import { intOption } from './arguments.js'
import { durationOption } from './time-arguments.js'
import { withTwain } from './context.js'

interface ServeCliOptions {
  host: string
  port: number
  longPollMs: number
  cors?: '*' | string[]
  auth?: string
  /** false with `--no-ui`. */
  ui: boolean
  metrics?: boolean
  subscriptions?: boolean
  publicUrl?: string
  compactEvery?: number
  tombstoneRetention?: number
}

/** `--host`: a host name or IP address to listen on (not empty, no scheme, port or path). */
export function hostOption(value: string): string {
  const host = value.trim()
  if (host === '' || /[/\s@?#]/.test(host))
    throw new CommanderArgError(`expected a host name or IP address, got ${JSON.stringify(value)}`)
  return host
}

/** `--cors`: `*` or origins separated by commas, each exactly `scheme://host[:port]`. */
export function corsOption(value: string): '*' | string[] {
  if (value.trim() === '*') return '*'
  const origins = value.split(',').map((o) => o.trim())
  for (const o of origins) {
    let origin: string | undefined
    try {
      origin = new URL(o).origin
    } catch {
      origin = undefined
    }
    if (origin === undefined || origin === 'null' || origin !== o) {
      throw new CommanderArgError(
        `expected '*' or origins like https://app.example separated by commas, got ${JSON.stringify(o)}`,
      )
    }
  }
  return origins
}

/** A `durationOption` parser that also refuses more than `maxMs` (`most`: how to say it). */
function durationUpTo(maxMs: number, most: string): (value: string) => number {
  return (value) => {
    const ms = durationOption(value)
    if (ms > maxMs) throw new CommanderArgError(`expected a duration of at most ${most}, got ${JSON.stringify(value)}`)
    return ms
  }
}

/** The base URL of the streams on a listening server (IPv6 hosts in brackets). */
function baseUrl(server: Server, host: string): string {
  const { port } = server.address() as AddressInfo
  const shown = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host
  return `http://${shown}:${port}/`
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      resolve()
    })
  })
}

/**
 * `twainmq serve [--host h] [--port p] [--long-poll-ms ms] [--cors origins] [--auth file] [--no-ui] [--metrics] [--subscriptions [--public-url origin]] [--compact-every d] [--tombstone-retention d]`: serve the store over
 * HTTP with the Durable Streams protocol (docs/gateway.md) and the dashboard at `/` (docs/dashboard.md) until SIGINT/SIGTERM. Prints one line,
 * `twainmq gateway listening on http://<host>:<port>/v1/stream/ (dashboard: http://<host>:<port>/)`
 * (without the dashboard part under `--no-ui`; with `, metrics: http://<host>:<port>/metrics` under
 * `--metrics`), once it accepts connections. On a
 * signal it stops accepting, closes the gateway (open SSE and long-poll responses end; in-flight
 * appends finish), closes the idle keep-alive connections and the store, and exits 0. A second
 * signal while stopping gives up waiting (exit 130).
 */
export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('serve the store over HTTP (Durable Streams protocol) until Ctrl-C')
    .addOption(new Option('--host <host>', 'address to listen on').argParser(hostOption).default('127.0.0.1'))
    .addOption(
      new Option('--port <port>', 'TCP port (0: any free port, printed)').argParser(intOption(0, 65_535)).default(4437),
    )
    .addOption(
      new Option('--long-poll-ms <ms>', 'how long a long-poll read waits for data before answering 204')
        .argParser(intOption(1, 3_600_000))
        .default(20_000),
    )
    .addOption(
      new Option(
        '--cors <origins>',
        "let browser pages of these origins use the gateway (comma-separated, or '*'); default: same origin only",
      ).argParser(corsOption),
    )
    .addOption(new Option('--no-ui', 'do not serve the dashboard at / (docs/dashboard.md)'))
    .addOption(
      new Option(
        '--metrics',
        'serve Prometheus metrics at /metrics (needs the prom-client package; docs/observability.md, "Prometheus")',
      ),
    )
    .addOption(
      new Option(
        '--subscriptions',
        'serve Durable Streams subscriptions (webhook, pull-wake) under /v1/stream/__ds/ (docs/gateway.md, "Subscriptions")',
      ),
    )
    .addOption(
      new Option(
        '--public-url <origin>',
        'the origin webhook receivers reach this gateway at (callback URLs); default: the Host of the request',
      ),
    )
    .addOption(
      new Option(
        '--compact-every <duration>',
        'how often streams created with Stream-Compaction get a compaction pass: ms, or a number with ms, s, m, h or d (default 30s)',
      ).argParser(durationUpTo(86_400_000, 'a day (24h)')),
    )
    .addOption(
      new Option(
        '--tombstone-retention <duration>',
        'how long a delete of a compacted stream is kept (set when the stream is created; default 1d)',
      ).argParser(durationUpTo(365 * 86_400_000, '365d')),
    )
    .addOption(
      new Option(
        '--auth <file>',
        'bearer tokens and their read/write grants (docs/gateway.md, "Auth"); default: no token check',
      ),
    )
    .action(async (opts: ServeCliOptions, cmd: Command) => {
      // Handle signals from the start, so a Ctrl-C while the store opens also ends cleanly.
      let stop: (() => void) | undefined
      let signals = 0
      const onSignal = () => {
        if (++signals > 1) process.exit(130)
        stop?.()
      }
      process.on('SIGINT', onSignal)
      process.on('SIGTERM', onSignal)
      try {
        // Read before the store opens: a bad file is reported without touching the store.
        const auth = opts.auth === undefined ? undefined : await TokenAuth.load(opts.auth)
        await withTwain(cmd, async (twain) => {
          const metrics = opts.metrics === true ? await prometheusMetrics(twain, { processMetrics: true }) : undefined
          const gateway = createGateway(twain, {
            longPollMs: opts.longPollMs,
            ui: opts.ui,
            ...(opts.cors === undefined ? {} : { cors: opts.cors }),
            ...(auth ? { auth } : {}),
            ...(metrics ? { metrics } : {}),
            ...(opts.subscriptions === true ? { subscriptions: true } : {}),
            ...(opts.publicUrl === undefined ? {} : { publicUrl: opts.publicUrl }),
            ...(opts.compactEvery === undefined ? {} : { compactEveryMs: opts.compactEvery }),
            ...(opts.tombstoneRetention === undefined ? {} : { tombstoneRetentionMs: opts.tombstoneRetention }),
          })
          const server = createServer(gateway.node)
          // Longer than clients' idle keep-alive (undici: 4 s), so a client closes an idle connection
          // first and never reuses one the server is closing.
          server.keepAliveTimeout = 60_000
          const stopped = new Promise<void>((resolve) => (stop = resolve))
          if (signals > 0) return
          await listen(server, opts.port, opts.host)
          const base = baseUrl(server, opts.host)
          const extras = [...(opts.ui ? [`dashboard: ${base}`] : []), ...(metrics ? [`metrics: ${base}metrics`] : [])]
          process.stdout.write(
            `twainmq gateway listening on ${base}v1/stream/${extras.length > 0 ? ` (${extras.join(', ')})` : ''}\n`,
          )
          if (signals === 0) await stopped
          const closed = new Promise<void>((resolve) => server.close(() => resolve()))
          await gateway.close()
          metrics?.close()
          server.closeAllConnections()
          await closed
        })
      } finally {
        process.off('SIGINT', onSignal)
        process.off('SIGTERM', onSignal)
      }
    })
}
