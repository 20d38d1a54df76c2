// The type tests in test/types/ (key type parameters, operator typing, the README's and docs'
// snippets) compile under strict TypeScript: tsc reports no error, and every `@ts-expect-error` is used.
import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { repoRoot } from '../helpers/spawn.js'

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')

it('test/types/*.ts compile under strict with no errors', () => {
  const r = spawnSync(process.execPath, [tsc, '--noEmit', '-p', join(repoRoot, 'test', 'types', 'tsconfig.json')], { cwd: repoRoot, encoding: 'utf8', timeout: 120_000 })
  expect(`${r.stdout}${r.stderr}`).toBe('')
  expect(r.status).toBe(0)
}, 120_000)
