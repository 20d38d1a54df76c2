// The published declarations of the error classes (dist/, made by `npm run build`, which `npm test`
// runs first): each is a class extending TwainError, so `instanceof` narrows in a user's code.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import * as api from '../../../src/index.js'
import { repoRoot } from '../../helpers/spawn.js'

const classes = Object.keys(api).filter((name) => {
  const v = (api as Record<string, unknown>)[name]
  return (
    typeof v === 'function' &&
    name.endsWith('Error') &&
    (v === api.TwainError || (v as { prototype: unknown }).prototype instanceof api.TwainError)
  )
})

describe('the published declarations (dist/core/errors.d.ts, made by npm run build)', () => {
  it('declare every exported error as a class extending TwainError, none as an anonymous constructor shape', () => {
    const dts = readFileSync(join(repoRoot, 'dist', 'core', 'errors.d.ts'), 'utf8')
    for (const name of classes.filter((n) => n !== 'TwainError')) {
      expect(dts, name).toMatch(new RegExp(`export declare class ${name} extends TwainError\\b`))
    }
    expect(dts).not.toMatch(/declare const \w+Error\b/)
  })
})
