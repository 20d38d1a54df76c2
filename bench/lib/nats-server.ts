/**
 * A private `nats-server -js` for the peers bench: a free loopback port, a fresh temp store
 * directory, JetStream file storage. Installed with apt-get when missing (the way .ci/run installs
 * redis-server). Stopped by its PID, never by name.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { canConnect } from '../../test/helpers/net.js'
import { freePort } from '../../test/helpers/redis-server.js'
import { sleep } from './stats.js'
import { makeTempDir, removeTempDir } from './tmp.js'

const CANDIDATES = ['/usr/sbin/nats-server', '/usr/bin/nats-server', '/usr/local/bin/nats-server']

function which(): string | undefined {
  for (const c of CANDIDATES) if (existsSync(c)) return c
  const r = spawnSync('sh', ['-c', 'command -v nats-server'], { encoding: 'utf8' })
  return r.status === 0 && r.stdout.trim() ? r.stdout.trim() : undefined
}

/** The nats-server binary, installed with `apt-get install nats-server` (Debian) when missing. */
export function natsServerBinary(): string {
  const found = which()
  if (found) return found
  process.stderr.write('== installing nats-server (apt-get install nats-server)\n')
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
  const update = spawnSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env })
  const install =
    update.status === 0
      ? spawnSync('apt-get', ['install', '-y', '-qq', 'nats-server'], { stdio: 'inherit', env })
      : update
  const bin = which()
  if (install.status !== 0 || !bin)
    throw new Error(
      `nats-server is not installed and apt-get install nats-server failed (status ${install.status ?? install.error?.message})`,
    )
  return bin
}

export class NatsServer {
  private constructor(
    readonly port: number,
    readonly version: string,
    readonly storeDir: string,
    private readonly proc: ChildProcess,
    private readonly exited: Promise<void>,
  ) {}

  get url(): string {
    return `nats://127.0.0.1:${this.port}`
  }

  get pid(): number {
    return this.proc.pid as number
  }

  static async start(): Promise<NatsServer> {
    const bin = natsServerBinary()
    const version = spawnSync(bin, ['--version'], { encoding: 'utf8' }).stdout.trim()
    const port = await freePort()
    const dir = makeTempDir('nats')
    const proc = spawn(bin, ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', dir], {
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    let err = ''
    proc.stderr?.on('data', (d: Buffer) => (err = (err + d.toString('utf8')).slice(-4000)))
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()))
    const t0 = performance.now()
    while (!(await canConnect(port))) {
      if (proc.exitCode !== null || proc.signalCode !== null)
        throw new Error(`nats-server exited (${proc.exitCode ?? proc.signalCode}) before listening on ${port}: ${err}`)
      if (performance.now() - t0 > 10_000) {
        proc.kill('SIGKILL')
        throw new Error(`nats-server did not listen on 127.0.0.1:${port} within 10 s: ${err}`)
      }
      await sleep(20)
    }
    return new NatsServer(port, version, dir, proc, exited)
  }

  async stop(): Promise<void> {
    if (this.proc.exitCode === null && this.proc.signalCode === null) {
      this.proc.kill('SIGTERM')
      const timer = setTimeout(() => this.proc.kill('SIGKILL'), 10_000)
      await this.exited
      clearTimeout(timer)
    }
    removeTempDir(this.storeDir)
  }
}
