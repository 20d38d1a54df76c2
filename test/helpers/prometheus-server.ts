/**
 * A real Prometheus server (Debian's `prometheus`) for the metrics tests: started on a free
 * loopback port with a config scraping the given targets every second, queried through its HTTP
 * API, stopped by its PID.
 */
import { killOnExit, terminate } from './exit-kill.js'
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { freePort } from './redis-server.js'
import { tempDir } from './tmp.js'
import { until } from './wait.js'

/** One series of an instant query: its labels and [unix seconds, value]. */
export interface PromSeries {
  metric: Record<string, string>
  value: [number, string]
}

export class PrometheusServer {
  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
    private readonly dir: string,
    private readonly log: () => string,
  ) {}

  /** Start Prometheus scraping `targets` (host:port) at `metricsPath` every second, with a bearer token if given. */
  static async start(
    targets: string[],
    options: { metricsPath?: string; bearer?: string } = {},
  ): Promise<PrometheusServer> {
    const { dir } = tempDir('twainmq-prometheus-')
    const config = [
      'global:',
      '  scrape_interval: 1s',
      '  scrape_timeout: 1s',
      'scrape_configs:',
      '  - job_name: twainmq',
      `    metrics_path: ${options.metricsPath ?? '/metrics'}`,
      ...(options.bearer === undefined ? [] : ['    authorization:', `      credentials: ${options.bearer}`]),
      '    static_configs:',
      `      - targets: [${targets.map((t) => `'${t}'`).join(', ')}]`,
      '',
    ].join('\n')
    writeFileSync(join(dir, 'prometheus.yml'), config)
    const port = await freePort()
    const child = spawn(
      'prometheus',
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--log.level=warn',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    )
    killOnExit(child)
    let log = ''
    const keep = (d: string) => (log = (log + d).slice(-4000))
    child.stdout?.setEncoding('utf8').on('data', keep)
    child.stderr?.setEncoding('utf8').on('data', keep)
    child.once('error', (e) => keep(`cannot start prometheus (is it on PATH?): ${e.message}`))
    const server = new PrometheusServer(child, `http://127.0.0.1:${port}`, dir, () => log)
    try {
      await until(
        async () => {
          if (child.exitCode !== null || child.pid === undefined) throw new Error(`prometheus exited: ${log}`)
          try {
            return (await fetch(`${server.url}/-/ready`)).status === 200
          } catch {
            return false
          }
        },
        60_000,
        'prometheus to be ready',
      )
    } catch (e) {
      await server.stop()
      throw e
    }
    return server
  }

  /** The series an instant PromQL query returns now. */
  async query(promql: string): Promise<PromSeries[]> {
    const res = await fetch(`${this.url}/api/v1/query?query=${encodeURIComponent(promql)}`)
    const body = (await res.json()) as {
      status: string
      data?: { resultType: string; result: PromSeries[] }
      error?: string
    }
    if (body.status !== 'success') throw new Error(`query ${promql} failed: ${body.error ?? res.status}`)
    return body.data?.result ?? []
  }

  /** The health of each target's last scrape, as Prometheus reports it. */
  async targets(): Promise<Array<{ health: string; lastError: string; scrapeUrl: string }>> {
    const res = await fetch(`${this.url}/api/v1/targets`)
    const body = (await res.json()) as {
      data: { activeTargets: Array<{ health: string; lastError: string; scrapeUrl: string }> }
    }
    return body.data.activeTargets
  }

  /** Stop the server by its PID (SIGTERM, SIGKILL after 5 s) and remove its files. */
  async stop(): Promise<void> {
    await terminate(this.child)
    rmSync(this.dir, { recursive: true, force: true })
  }

  /** What the server logged lately (for a failing test's message). */
  get output(): string {
    return this.log()
  }
}

/** `promtool check metrics` on an exposition: its exit code and what it said. */
export function promtoolCheck(exposition: string): { code: number | null; output: string } {
  const r = spawnSync('promtool', ['check', 'metrics'], { input: exposition, encoding: 'utf8' })
  if (r.error) throw new Error(`cannot run promtool (is it on PATH?): ${r.error.message}`)
  return { code: r.status, output: `${r.stdout}${r.stderr}` }
}
