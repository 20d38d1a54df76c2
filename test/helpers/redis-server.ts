/**
 * A private `redis-server` for tests and benchmarks: a free loopback port (never 6379), its own temp
 * directory, no RDB snapshots; AOF optional (for restart tests). Stopped by PID, never by name.
 */
import { killOnExit, terminate } from './exit-kill.js'
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createConnection, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sleep } from './wait.js'

/** How much of a server's log it keeps (the end), for startup errors and fault reports. */
const LOG_TAIL = 16_000

export interface RedisServerOptions {
  /** Append-only file with `appendfsync always`, so a restart keeps every acknowledged write. */
  aof?: boolean
  /** More `redis-server` arguments, e.g. `['--requirepass', 'secret']`. */
  args?: string[]
}

/** A free TCP port on 127.0.0.1 (not 6379). */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const srv = createServer()
      srv.once('error', reject)
      srv.listen(0, '127.0.0.1', () => {
        const addr = srv.address()
        const p = typeof addr === 'object' && addr ? addr.port : 0
        srv.close(() => resolve(p))
      })
    })
    if (port !== 6379 && port > 0) return port
  }
}

/** Send one inline command on a fresh socket; resolves with the first reply line (or rejects). */
function rawCommand(port: number, command: string, timeoutMs = 500): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = createConnection({ host: '127.0.0.1', port })
    let data = ''
    const timer = setTimeout(() => {
      sock.destroy()
      reject(new Error('timeout'))
    }, timeoutMs)
    sock.once('error', (e) => {
      clearTimeout(timer)
      reject(e)
    })
    sock.on('data', (d) => {
      data += d.toString('utf8')
      const nl = data.indexOf('\r\n')
      if (nl >= 0) {
        clearTimeout(timer)
        sock.destroy()
        resolve(data.slice(0, nl))
      }
    })
    sock.once('connect', () => sock.write(`${command}\r\n`))
  })
}

/** The `process_id` of the server answering on `port` (`INFO server`), or undefined. */
function serverPid(port: number, timeoutMs = 500): Promise<number | undefined> {
  return new Promise((resolve) => {
    const sock = createConnection({ host: '127.0.0.1', port })
    let data = ''
    const done = (pid: number | undefined) => {
      clearTimeout(timer)
      sock.destroy()
      resolve(pid)
    }
    const timer = setTimeout(() => done(undefined), timeoutMs)
    sock.once('error', () => done(undefined))
    sock.on('data', (d) => {
      data += d.toString('utf8')
      const m = /process_id:(\d+)\r\n/.exec(data)
      if (m) done(Number(m[1]))
      else if (data.startsWith('-')) done(undefined)
    })
    sock.once('connect', () => sock.write('INFO server\r\n'))
  })
}

export class RedisServer {
  private child: ChildProcess | undefined
  private stderr = ''

  private constructor(
    readonly port: number,
    readonly dir: string,
    private readonly options: RedisServerOptions,
  ) {}

  /**
   * Start a server on a free port and wait until it answers PING. A port taken between the check
   * and the bind (another test's server; for a Cluster node also its bus port, port + 10000) is
   * tried again on another port.
   */
  static async start(options: RedisServerOptions = {}): Promise<RedisServer> {
    for (let attempt = 1; ; attempt++) {
      const dir = mkdtempSync(join(tmpdir(), 'twainmq-redis-'))
      const server = new RedisServer(await freePort(), dir, options)
      try {
        await server.launch()
        return server
      } catch (e) {
        rmSync(dir, { recursive: true, force: true })
        if (attempt >= 5 || !/Address already in use/.test((e as Error).message)) throw e
      }
    }
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`
  }

  /** The end of what the server logged since it last started (failovers, syncs, state changes). */
  get log(): string {
    return this.stderr
  }

  get pid(): number | undefined {
    return this.child?.pid
  }

  private async launch(): Promise<void> {
    const args = [
      '--port',
      String(this.port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--dir',
      this.dir,
      '--daemonize',
      'no',
      '--protected-mode',
      'no',
    ]
    if (this.options.aof) args.push('--appendonly', 'yes', '--appendfsync', 'always')
    else args.push('--appendonly', 'no')
    args.push(...(this.options.args ?? []))
    // redis-server logs to stdout, where it also says why it could not start (a port in use).
    const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] })
    this.child = child
    killOnExit(child)
    this.stderr = ''
    const collect = (d: string) => (this.stderr = (this.stderr + d).slice(-LOG_TAIL))
    child.stdout?.setEncoding('utf8').on('data', collect)
    child.stderr?.setEncoding('utf8').on('data', collect)
    const spawnError = new Promise<never>((_, reject) =>
      child.once('error', (e) => reject(new Error(`cannot start redis-server (is it on PATH?): ${e.message}`))),
    )
    spawnError.catch(() => undefined)
    const deadline = Date.now() + 10_000
    for (;;) {
      if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}: ${this.stderr}`)
      try {
        const reply = await Promise.race([rawCommand(this.port, 'PING'), spawnError])
        // Our process, not another test's server already on this port (it would exit: port in use).
        if (reply === '+PONG' && (await serverPid(this.port)) === child.pid) return
        if (reply.startsWith('-NOAUTH') && child.exitCode === null) return // up, with a password
      } catch (e) {
        if ((e as Error).message.startsWith('cannot start')) throw e
      }
      if (Date.now() > deadline)
        throw new Error(`redis-server on port ${this.port} did not answer PING within 10 s: ${this.stderr}`)
      await sleep(20)
    }
  }

  /** Stop the server (SIGTERM, then SIGKILL after 5 s) by its PID. */
  async stop(): Promise<void> {
    const child = this.child
    this.child = undefined
    if (child) await terminate(child) // SIGCONT too: a paused server acts on SIGTERM only once it runs again
  }

  /** Whether the process is running (started, not exited; it may be paused). */
  get running(): boolean {
    const c = this.child
    return c !== undefined && c.exitCode === null && c.signalCode === null
  }

  /** kill -9 by PID; resolves once the process has exited. `restart()` brings it back. */
  async kill(): Promise<void> {
    const child = this.child
    if (!child || child.pid === undefined || !this.running) return
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
    process.kill(child.pid, 'SIGKILL')
    await exited
  }

  /** Freeze (SIGSTOP) or thaw (SIGCONT) the process, as a VM pause or a partition would. */
  pause(on: boolean): void {
    if (this.child?.pid !== undefined && this.running) process.kill(this.child.pid, on ? 'SIGSTOP' : 'SIGCONT')
  }

  /** Stop and start again on the same port and directory (with AOF, the data survives). */
  async restart(downMs = 0): Promise<void> {
    await this.stop()
    if (downMs > 0) await sleep(downMs)
    await this.launch()
  }

  /** Stop the server and remove its directory. */
  async destroy(): Promise<void> {
    await this.stop()
    rmSync(this.dir, { recursive: true, force: true })
  }
}
