// What a new user gets from `npm pack`: the tarball of a fresh clone, installed offline into a scratch
// app with strict TypeScript (lib ES2022, no DOM, skipLibCheck false), every entry point type-checked
// and run, the CLI run from the installed bin, require() from CommonJS, and the tarball's contents.
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { filesUnder, freshClone, installScratchApp, ok, pack, run } from '../../helpers/package-app.js'
import { repoRoot } from '../../helpers/spawn.js'
import { tempDir } from '../../helpers/tmp.js'

const REPO = 'https://github.com/twainmq/twainmq'
const fixtures = join(repoRoot, 'test', 'fixtures', 'package-app')
const ours = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { name: string; version: string }
const strict = {
  target: 'ES2022',
  module: 'NodeNext',
  moduleResolution: 'NodeNext',
  lib: ['ES2022'],
  types: ['node'],
  strict: true,
  skipLibCheck: false,
  outDir: 'build',
}

/** The README's Quick start, as a user would paste it into a file. */
function quickStart(): string {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8')
  const code = /## Quick start\s+```ts\n([\s\S]*?)```/.exec(readme)?.[1]
  if (code === undefined) throw new Error('README.md has no ```ts block under "## Quick start"')
  return code
}

let tmp: { dir: string; remove: () => void }
let clone: string
let app: string
let packed: string
let packLog: string

beforeAll(async () => {
  tmp = tempDir('twainmq-package-')
  clone = freshClone(join(tmp.dir, 'clone'))
  mkdirSync(join(tmp.dir, 'out'))
  const p = await pack(clone, join(tmp.dir, 'out'))
  packed = p.tarball
  packLog = p.log
  app = join(tmp.dir, 'app')
  mkdirSync(app)
  await installScratchApp(app, packed, ['rxjs', 'ix', 'typescript', '@types/node', 'prom-client'])
  for (const f of ['app.ts', 'ix-app.ts', 'require.cjs']) copyFileSync(join(fixtures, f), join(app, f))
  writeFileSync(join(app, 'quickstart.ts'), quickStart())
  writeFileSync(
    join(app, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: strict, files: ['quickstart.ts', 'app.ts', 'ix-app.ts'] }),
  )
}, 240_000)

afterAll(() => tmp?.remove())

const installed = (): string => join(app, 'node_modules', ours.name)

describe('the packed tarball in a fresh strict-TypeScript app', () => {
  it('npm pack builds a fresh clone (prepack) and the app installs from the npm cache', () => {
    expect(existsSync(join(clone, 'dist', 'index.js')), 'prepack built dist/ in the clone').toBe(true)
    expect(packLog).toMatch(/> twainmq@[^ ]+ prepack/)
    expect(
      packLog.split('\n').filter((l) => /npm warn/i.test(l)),
      'npm pack warnings',
    ).toEqual([])
    const manifest = JSON.parse(readFileSync(join(installed(), 'package.json'), 'utf8')) as Record<string, unknown>
    expect(manifest['scripts'], 'no prepare: npm 11 warns on installs that run it').not.toHaveProperty('prepare')
    expect(manifest['scripts']).toHaveProperty('prepack')
    expect(manifest['repository']).toEqual({ type: 'git', url: `git+${REPO}.git` })
    expect(manifest['homepage']).toBe(`${REPO}#readme`)
    expect(manifest['bugs']).toEqual({ url: `${REPO}/issues` })
    const conditions = Object.entries(manifest['exports'] as Record<string, unknown>).filter(
      ([, v]) => typeof v === 'object',
    )
    expect(
      conditions.filter(([, v]) => !('default' in (v as object))).map(([k]) => k),
      'exports without a default condition',
    ).toEqual([])
  })

  it('type-checks the Quick start, every entry point, RxJS and IxJS pipelines with lib ES2022 only (no DOM)', async () => {
    ok(await run('npx', ['--no', '--', 'tsc', '-p', 'tsconfig.json'], app), 'tsc (lib ES2022, skipLibCheck false)')
    for (const f of ['quickstart', 'app', 'ix-app']) expect(existsSync(join(app, 'build', `${f}.js`))).toBe(true)
  }, 120_000)

  it('runs the Quick start, then an app using every entry point and an RxJS pipeline', async () => {
    ok(await run(process.execPath, ['build/quickstart.js'], app), 'node build/quickstart.js')
    const out = ok(await run(process.execPath, ['build/app.js', join(app, 'store-app')], app), 'node build/app.js')
    expect(JSON.parse(out.stdout)).toEqual({
      duplicate: 'ERR_TOPIC_EXISTS',
      tailed: [1, 2, 3, 4, 5, 6],
      rxSeen: [1, 2, 3, 4, 5, 6],
      rxAcked: 6,
      sum: 21,
      committed: [6, 6],
      ack: 'function',
      http: { created: 201, read: [{ hi: 1 }], browser: [{ hi: 1 }], prometheus: true },
    })
  }, 120_000)

  it('runs an IxJS pipeline with twainmq operators', async () => {
    const out = ok(await run(process.execPath, ['build/ix-app.js', join(app, 'store-ix')], app), 'node build/ix-app.js')
    expect(JSON.parse(out.stdout)).toEqual({ handled: [1, 2, 3, 4, 5, 6], offsets: 6, committed: 6 })
  }, 120_000)

  it('the installed bin answers --version, creates and lists topics', async () => {
    const version = ok(await run('npx', ['--no', '--', 'twainmq', '--version'], app), 'npx twainmq --version')
    expect(version.stdout.trim()).toBe(ours.version)
    const bin = join(app, 'node_modules', '.bin', 'twainmq')
    const url = ['--url', join(app, 'store-cli')]
    ok(await run(bin, ['topics', 'create', 'orders', '--partitions', '2', ...url], app), 'twainmq topics create')
    const list = ok(await run(bin, ['topics', 'list', ...url], app), 'twainmq topics list')
    expect(list.stdout.split('\n').filter((l) => l.length > 0)).toEqual(['orders'])
  }, 60_000)

  it('CommonJS require() of every entry point works (require(esm))', async () => {
    // Node 20.19+ and 22.12+ have require(esm) on by default (process.features.require_module);
    // 20.17/20.18 and 22.0-22.11 only behind the flag.
    const flag =
      (process.features as { require_module?: boolean }).require_module === true
        ? []
        : ['--experimental-require-module']
    const out = ok(
      await run(process.execPath, [...flag, 'require.cjs', join(app, 'store-cjs')], app),
      'node require.cjs',
    )
    const r = JSON.parse(out.stdout) as {
      topics: string[]
      value: unknown
      twainError: string
      operators: string[]
      rx: string[]
      gateway: string[]
      browser: string[]
      prometheus: string[]
    }
    expect(r.topics).toEqual(['cjs'])
    expect(r.value).toEqual({ via: 'require' })
    expect(r.twainError).toBe('function')
    expect(r.operators).toEqual(expect.arrayContaining(['ack', 'batch', 'pipe', 'retry']))
    expect(r.rx).toEqual(expect.arrayContaining(['ackRx', 'batchRx', 'retryRx']))
    expect(r.gateway).toEqual(['TokenAuth', 'createGateway'])
    expect(r.browser).toEqual(expect.arrayContaining(['connect', 'BrowserMessageStream', 'HttpError']))
    expect(r.prometheus).toEqual(['prometheusMetrics'])
  }, 60_000)

  it('ships LICENSE, README, built JS with declarations, maps whose sources are shipped, and no tests', () => {
    const files = filesUnder(installed())
    expect(files).toEqual(
      expect.arrayContaining(['LICENSE', 'README.md', 'package.json', 'dist/cli/main.js', 'docs/operators.md']),
    )
    expect(files.filter((f) => f.startsWith('src/') && f.endsWith('.ts')).length).toBeGreaterThan(0)
    expect(readFileSync(join(installed(), 'LICENSE'), 'utf8')).toMatch(
      /MIT License[\s\S]*Copyright \(c\) 2026 the twainmq authors/,
    )
    for (const entry of [
      'dist/index',
      'dist/operators/index',
      'dist/operators/rx/index',
      'dist/gateway/index',
      'dist/browser/index',
      'dist/prometheus/index',
    ]) {
      expect(files).toEqual(expect.arrayContaining([`${entry}.js`, `${entry}.d.ts`]))
    }
    expect(
      files.filter((f) => /(^|\/)(test|tests|property-tests|__tests__)\/|\.(test|spec)\.[cm]?[jt]s$/.test(f)),
    ).toEqual([])
    const maps = files.filter((f) => f.endsWith('.map'))
    expect(maps.length).toBeGreaterThan(0)
    const unresolved: string[] = []
    for (const m of maps) {
      const map = JSON.parse(readFileSync(join(installed(), m), 'utf8')) as {
        sources: string[]
        sourceRoot?: string
        sourcesContent?: unknown[]
      }
      map.sources.forEach((s, i) => {
        const file = resolve(dirname(join(installed(), m)), map.sourceRoot ?? '', s)
        const inside = !relative(installed(), file).startsWith('..')
        if (!(inside && existsSync(file)) && typeof map.sourcesContent?.[i] !== 'string') unresolved.push(`${m} → ${s}`)
      })
    }
    expect(unresolved.slice(0, 5), `${unresolved.length} map sources are not in the package`).toEqual([])
  })

  it('README links work on npm: docs and examples by absolute URL, and the linked files exist', () => {
    const readme = readFileSync(join(installed(), 'README.md'), 'utf8')
    const links = [...readme.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!)
    expect(
      links.filter((l) => !l.startsWith('#') && !/^https?:\/\//.test(l)),
      'relative links are dead on npmjs.com',
    ).toEqual([])
    const own = /^https:\/\/github\.com\/twainmq\/twainmq\/(?:blob|tree)\/main\/([^#]+)/
    const ownFiles = links.flatMap((l) => own.exec(l)?.[1] ?? [])
    expect(ownFiles).toEqual(expect.arrayContaining(['docs/operators.md', 'docs/cli.md']))
    expect(ownFiles.some((f) => f.startsWith('examples/'))).toBe(true)
    expect(ownFiles.filter((f) => !existsSync(join(clone, f)))).toEqual([])
  })
})
