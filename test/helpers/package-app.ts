// The packed-tarball test's machinery: pack a fresh copy of the repository (as a clone would be, no
// dist/), and install the tarball into a scratch app from the npm cache only, with the versions this
// repository's lockfile pins.
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { cpSync, existsSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import { repoRoot } from './spawn.js'

export interface RunResult {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** Run a command to its end (never through a shell); a non-zero exit is a result, not a throw. */
export function run(cmd: string, args: readonly string[], cwd: string, timeoutMs = 120_000): Promise<RunResult> {
  return new Promise((resolve) => {
    execFile(cmd, args, { cwd, encoding: 'utf8', timeout: timeoutMs, maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : 1
      resolve({
        code,
        stdout,
        stderr: err !== null && typeof err.code !== 'number' ? `${stderr}\n${err.message}` : stderr,
      })
    })
  })
}

/** Fail with the command's output when it did not exit 0. */
export function ok(r: RunResult, what: string): RunResult {
  if (r.code !== 0) throw new Error(`${what} exited ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`)
  return r
}

/** The names .gitignore keeps out of a clone (its simple patterns: `name`, `name/`, `/name`, `*.ext`). */
function ignoredNames(): (name: string) => boolean {
  const patterns = readFileSync(join(repoRoot, '.gitignore'), 'utf8')
    .split('\n')
    .map((l) => l.trim().replace(/^\/|\/$/g, ''))
    .filter((l) => l.length > 0 && !l.startsWith('#'))
  return (name) => name === '.git' || patterns.some((p) => (p.startsWith('*') ? name.endsWith(p.slice(1)) : name === p))
}

/**
 * Copy the repository as a fresh clone has it (nothing .gitignore lists: no dist/, no node_modules/)
 * into `dir`, with node_modules linked to ours, so `npm pack` there must build from scratch.
 */
export function freshClone(dir: string): string {
  const ignored = ignoredNames()
  cpSync(repoRoot, dir, { recursive: true, filter: (src) => src === repoRoot || !ignored(basename(src)) })
  symlinkSync(join(repoRoot, 'node_modules'), join(dir, 'node_modules'), 'dir')
  return dir
}

/** `npm pack` in `cloneDir` (its prepack script builds), the tarball written into `outDir`. */
export async function pack(cloneDir: string, outDir: string): Promise<{ tarball: string; log: string }> {
  const r = ok(await run('npm', ['pack', '--pack-destination', outDir], cloneDir), 'npm pack')
  const tgz = readdirSync(outDir).filter((f) => f.endsWith('.tgz'))
  if (tgz.length !== 1) throw new Error(`npm pack left ${tgz.length} tarballs in ${outDir}: ${tgz.join(', ')}`)
  return { tarball: join(outDir, tgz[0]!), log: `${r.stdout}\n${r.stderr}` }
}

interface LockEntry {
  version?: string
  dependencies?: Record<string, string>
  optionalDependencies?: Record<string, string>
  [field: string]: unknown
}

/**
 * package.json and package-lock.json of a scratch app that depends on the tarball and on `extra`
 * (names of packages our lockfile has), each at the version our lockfile pins: `npm ci` then needs
 * no registry metadata, only tarballs that our own `npm ci` left in the npm cache.
 */
export function scratchManifests(tarball: string, extra: readonly string[]): { manifest: object; lock: object } {
  const ours = JSON.parse(readFileSync(join(repoRoot, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, LockEntry>
  }
  const packed = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as LockEntry & { name: string }
  const spec = `file:${tarball}`
  const integrity = `sha512-${createHash('sha512').update(readFileSync(tarball)).digest('base64')}`
  const dependencies: Record<string, string> = { [packed.name]: spec }
  for (const name of extra) dependencies[name] = lockEntry(ours.packages, name).version ?? '*'
  const packages: Record<string, LockEntry> = {
    '': { name: 'scratch-app', dependencies },
    [`node_modules/${packed.name}`]: {
      version: packed.version,
      resolved: spec,
      integrity,
      license: packed['license'],
      dependencies: packed.dependencies,
      bin: packed['bin'],
      engines: packed['engines'],
    },
  }
  const queue = [...Object.keys(packed.dependencies ?? {}), ...extra]
  for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
    const key = `node_modules/${name}`
    if (packages[key] !== undefined) continue
    const { dev: _dev, devOptional: _devOptional, peer: _peer, ...entry } = lockEntry(ours.packages, name)
    packages[key] = entry
    queue.push(...Object.keys({ ...entry.dependencies, ...entry.optionalDependencies }))
  }
  return {
    manifest: { name: 'scratch-app', private: true, type: 'module', dependencies },
    lock: { name: 'scratch-app', lockfileVersion: 3, requires: true, packages },
  }
}

function lockEntry(packages: Record<string, LockEntry>, name: string): LockEntry {
  const e = packages[`node_modules/${name}`]
  if (e === undefined) throw new Error(`package-lock.json has no hoisted entry for "${name}"`)
  return e
}

/**
 * Install the scratch app in `appDir` offline from the npm cache (`npm ci --offline`); when the cache
 * lacks a tarball (a machine that never ran our `npm ci`), `--prefer-offline` fetches only what is missing.
 */
export async function installScratchApp(appDir: string, tarball: string, extra: readonly string[]): Promise<void> {
  const { manifest, lock } = scratchManifests(tarball, extra)
  writeFileSync(join(appDir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`)
  writeFileSync(join(appDir, 'package-lock.json'), `${JSON.stringify(lock, null, 2)}\n`)
  const flags = ['--no-audit', '--no-fund']
  const offline = await run('npm', ['ci', '--offline', ...flags], appDir)
  if (offline.code === 0) return
  if (!/ENOTCACHED/.test(offline.stderr)) ok(offline, 'npm ci --offline')
  ok(await run('npm', ['ci', '--prefer-offline', ...flags], appDir), 'npm ci --prefer-offline')
}

/** Every file under `dir`, as paths relative to it with `/` separators. */
export function filesUnder(dir: string, prefix = ''): string[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(join(dir, e.name), `${prefix}${e.name}/`) : [`${prefix}${e.name}`],
  )
}
