/**
 * Running the `twainmq` CLI from tests: `src/cli/main.ts` through tsx (or the build, see
 * {@link cliCommand}) in a child process, with stdio
 * piped (a socket pair, as Node spawns it) or, for `startCliInShell`, behind a real shell pipe.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { repoRoot, until } from './spawn.js'

/**
 * How the CLI is started: from the TypeScript sources through tsx, or, with
 * `TWAINMQ_TEST_CLI=dist` (set by `npm test`, which builds first), the built `dist/cli/main.js`
 * as the package runs it — about 0.45 s less per process on a 2-core machine, and the tests then
 * check what ships. A `vitest run` of its own always runs the sources, so it never sees a stale build.
 */
function cliCommand(): string[] {
  if (process.env.TWAINMQ_TEST_CLI !== 'dist') return ['--import', 'tsx', 'src/cli/main.ts']
  const main = join(repoRoot, 'dist', 'cli', 'main.js')
  if (!existsSync(main)) throw new Error(`TWAINMQ_TEST_CLI=dist but ${main} does not exist: run npm run build first`)
  return [main]
}
const MAIN = cliCommand()

export interface CliResult {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

/** A running CLI; `out` collects what it printed so far. */
export type CliChild = ChildProcess & { out: { stdout: string; stderr: string } }

/** Env of the child without a TWAINMQ_URL inherited from the developer's shell (unless `extra` sets one). */
function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = { ...process.env, ...extra }
  if (!('TWAINMQ_URL' in extra)) delete env.TWAINMQ_URL
  return env
}

function collect(child: ChildProcess): CliChild {
  const out = { stdout: '', stderr: '' }
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out.stdout += d))
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (out.stderr += d))
  return Object.assign(child, { out })
}

/** Start the CLI with `args`; stdin, stdout and stderr are pipes. */
export function startCli(args: string[], env: Record<string, string> = {}): CliChild {
  return collect(
    spawn(process.execPath, [...MAIN, ...args], { cwd: repoRoot, env: childEnv(env), stdio: ['pipe', 'pipe', 'pipe'] }),
  )
}

/**
 * Start `sh -c '<the CLI with args> | <pipeTo>'`: the CLI's stdout is a real pipe (not a socket)
 * read by `pipeTo`. The CLI's own exit code is printed on stderr as `cli exit code N`.
 */
export function startCliInShell(args: string[], pipeTo: string): CliChild {
  const script = `{ "$@"; echo "cli exit code $?" >&2; } | ${pipeTo}`
  return collect(
    spawn('sh', ['-c', script, 'sh', process.execPath, ...MAIN, ...args], {
      cwd: repoRoot,
      env: childEnv({}),
      stdio: ['pipe', 'pipe', 'pipe'],
    }),
  )
}

/** Resolves when the child exited and its output ended. */
export function finished(child: CliChild): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (code, signal) => resolve({ code, signal, ...child.out }))
  })
}

/** Run the CLI to completion; `input` is written to stdin, which is then closed (EOF). */
export async function runCli(args: string[], input = '', env: Record<string, string> = {}): Promise<CliResult> {
  const child = startCli(args, env)
  child.stdin!.end(input)
  return finished(child)
}

/** Wait until `check` holds (15 s at most, named `what` in the timeout error). */
export const waitFor = (what: string, check: () => boolean, timeoutMs = 15_000): Promise<void> =>
  until(check, timeoutMs, what)

/** The JSON objects of `--format json` output, one per line. */
export const jsonLines = (s: string): Array<Record<string, unknown>> =>
  s
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>)
