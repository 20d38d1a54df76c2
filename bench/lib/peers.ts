/**
 * The two servers of the gateway bench, each a child process on loopback over a fresh temp
 * directory: `twainmq serve` (src/cli/main.ts) and the Durable Streams reference server in its
 * file-backed mode (bench/children/reference-server.ts). Both run under `node --import tsx`, with
 * `--expose-gc` and a SIGUSR2 handler that collects garbage (for RSS readings of what is live).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { benchDir, repoRoot } from './child.js'
import { makeTempDir, removeTempDir } from './tmp.js'

export interface Peer {
  label: string
  /** Base URL of the streams, ending in `/v1/stream/`. */
  streams: string
  proc: ChildProcess
  /** RSS of the server process now, in bytes (from /proc). */
  rss(): number
  /** Run a full garbage collection in the server (SIGUSR2, bench/children/gc-on-signal.mjs) and give it `ms` to finish. */
  collect(ms?: number): Promise<void>
  /** CPU seconds (user + system) the server process has used so far (from /proc). */
  cpuSeconds(): number
  stop(): Promise<void>
}

const TICKS = 100 // USER_HZ on Linux

/** Start a server child and wait for its `listening on <url>` line. */
async function start(
  label: string,
  prefix: string,
  args: (dir: string) => string[],
  env: NodeJS.ProcessEnv = {},
): Promise<Peer> {
  const dir = makeTempDir(prefix)
  const gc = ['--expose-gc', '--import', pathToFileURL(join(benchDir, 'children', 'gc-on-signal.mjs')).href]
  const proc = spawn(process.execPath, [...gc, '--import', 'tsx', ...args(dir)], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, ...env },
  })
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()))
  const streams = await new Promise<string>((resolve, reject) => {
    let out = ''
    const onData = (d: Buffer) => {
      out += d.toString('utf8')
      const m = /listening on (http:\S+\/v1\/stream\/)/.exec(out)
      if (m) {
        proc.stdout?.off('data', onData)
        proc.stdout?.resume() // its later log lines are dropped
        resolve(m[1] as string)
      }
    }
    proc.stdout?.on('data', onData)
    proc.once('exit', (code, signal) =>
      reject(new Error(`${label} exited (${code ?? signal}) before listening: ${out}`)),
    )
  })
  const pid = proc.pid as number
  return {
    label,
    streams,
    proc,
    collect: async (ms = 300) => {
      proc.kill('SIGUSR2')
      await new Promise((r) => setTimeout(r, ms))
    },
    rss: () => Number(/VmRSS:\s+([0-9]+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) * 1024,
    cpuSeconds: () => {
      // /proc/<pid>/stat: fields after the ")" of the command name; utime and stime are the 12th and 13th.
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? []
      return (Number(fields[11]) + Number(fields[12])) / TICKS
    },
    stop: async () => {
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill('SIGTERM')
        const timer = setTimeout(() => proc.kill('SIGKILL'), 15_000)
        await exited
        clearTimeout(timer)
      }
      removeTempDir(dir)
    },
  }
}

/** `twainmq serve --port 0` over a new temp directory; `nodeArgs` (e.g. `--cpu-prof`) go to its node. */
export function startTwainmq(nodeArgs: string[] = []): Promise<Peer> {
  return start(
    'twainmq serve',
    'gw-ours',
    (dir) => [...nodeArgs, join(repoRoot, 'src', 'cli', 'main.ts'), '--url', dir, 'serve', '--port', '0'],
    { TWAINMQ_URL: '' },
  )
}

/** `@durable-streams/server` (file-backed, compression off, its default 30 s long-poll) over a new temp directory. */
export function startReference(): Promise<Peer> {
  return start('reference (@durable-streams/server, file-backed)', 'gw-ref', (dir) => [
    join(benchDir, 'children', 'reference-server.ts'),
    dir,
  ])
}
