// docs/errors.md lists every error class the package exports, with the code an instance carries
// and whether it is retriable, so the reference cannot drift from the code.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import * as api from '../../src/index.js'
import { repoRoot } from '../helpers/spawn.js'

const doc = readFileSync(join(repoRoot, 'docs', 'errors.md'), 'utf8')
const classes = Object.entries(api).filter(
  ([name, v]) =>
    typeof v === 'function' &&
    name.endsWith('Error') &&
    (v === api.TwainError || v.prototype instanceof api.TwainError),
) as Array<[string, new (message: string) => api.TwainError]>

describe('docs/errors.md', () => {
  it('covers the exported error classes', () => {
    expect(classes.length).toBeGreaterThanOrEqual(18)
  })
  for (const [name, Cls] of classes.filter(([n]) => n !== 'TwainError')) {
    it(`lists ${name} with its code and retriable flag`, () => {
      const e = new Cls('x')
      const row = doc.split('\n').find((l) => l.startsWith(`| \`${name}\` | \`${e.code}\``))
      expect(row, `no row "| \`${name}\` | \`${e.code}\` |" in docs/errors.md`).toBeDefined()
      const flag = (row as string).split('|')[3]?.trim()
      expect(
        flag === 'depends' || flag === (e.retriable ? 'yes' : 'no'),
        `${name}: retriable ${e.retriable}, the doc says ${flag}`,
      ).toBe(true)
    })
  }
})
