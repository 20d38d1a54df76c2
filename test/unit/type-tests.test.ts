// The type tests in test/types/ (key type parameters, operator typing, the README's and docs'
// snippets) compile under strict TypeScript: tsc reports no error, and every `@ts-expect-error` is used.
import { spawnSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { repoRoot } from '../helpers/spawn.js'

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')

/** The ```ts blocks of a markdown text. */
const tsBlocks = (md: string): string[] =>
  [...md.matchAll(/^[ \t]*```ts\n([\s\S]*?)^[ \t]*```/gm)].map((m) => m[1] as string) // a block in a list item is indented

/** A README section, from its heading to the next heading of the same or a higher level. */
function section(md: string, heading: string): string {
  const start = md.indexOf(`\n${heading}\n`)
  if (start < 0) throw new Error(`README has no section "${heading}"`)
  const level = /^#+/.exec(heading)?.[0].length ?? 2
  const rest = md.slice(start + heading.length + 2)
  const end = rest.search(new RegExp(`^#{1,${level}} `, 'm'))
  return end < 0 ? rest : rest.slice(0, end)
}

/** Code lines as compared: trimmed, without blank lines and imports (the type-test files hoist and merge those). */
const codeLines = (text: string): string[] =>
  text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('import '))

describe('type tests (test/types/)', () => {
  it('every snippet of README (Quick start, Topics, Producing, Exactly-once processing, State stores, Windows, Tables, Stream–stream joins, Operators, Observability) and docs/operators.md is in test/types/docs/, as written', () => {
    const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8')
    const ops = readFileSync(join(repoRoot, 'docs', 'operators.md'), 'utf8')
    const snippets = [
      ...[
        '## Quick start',
        '### Topics',
        '### Producing',
        '### Exactly-once processing',
        '### State stores',
        '### Windows',
        '### Tables',
        '### Stream–stream joins',
        '### Operators',
        '## Observability',
      ].flatMap((h) => tsBlocks(section(readme, h))),
      ...tsBlocks(ops),
    ]
    const dir = join(repoRoot, 'test', 'types', 'docs')
    const typed = codeLines(
      readdirSync(dir)
        .map((f) => readFileSync(join(dir, f), 'utf8'))
        .join('\n'),
    ).join('\n')
    expect(snippets.length).toBeGreaterThanOrEqual(10)
    for (const s of snippets) {
      const lines = codeLines(s)
      if (lines.length > 0) expect(typed, `snippet not in test/types/docs/:\n${s}`).toContain(lines.join('\n'))
    }
  })

  it('test/types/**/*.ts compile under strict with no errors', () => {
    const r = spawnSync(process.execPath, [tsc, '--noEmit', '-p', join(repoRoot, 'test', 'types', 'tsconfig.json')], {
      cwd: repoRoot,
      encoding: 'utf8',
      timeout: 120_000,
    })
    expect(`${r.stdout}${r.stderr}`).toBe('')
    expect(r.status).toBe(0)
  }, 120_000)
})
