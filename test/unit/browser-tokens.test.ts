import { describe, expect, it } from 'vitest'
import { batchTokens, compareTokens, formatPosition, parsePosition } from '../../src/browser/tokens.js'

const tok = (inc: number, off: number): string => `${String(inc).padStart(16, '0')}_${String(off).padStart(16, '0')}`

describe('browser offset tokens', () => {
  it('parses from: start (default), now/end, plain and composite tokens', () => {
    expect(parsePosition(undefined)).toEqual({ base: '-1', skip: 0 })
    expect(parsePosition('start')).toEqual({ base: '-1', skip: 0 })
    expect(parsePosition('end')).toEqual({ base: 'now', skip: 0 })
    expect(parsePosition('now')).toEqual({ base: 'now', skip: 0 })
    expect(parsePosition(`${tok(1, 5)},3`)).toEqual({ base: tok(1, 5), skip: 3 })
    expect(formatPosition({ base: tok(1, 5), skip: 0 })).toBe(tok(1, 5))
    expect(() => parsePosition('abc,x')).toThrow(/"abc,x"/)
  })

  it('exact gateway tokens when the batch is provably consecutive records', () => {
    expect(batchTokens({ base: tok(7, 3), skip: 0 }, tok(7, 6), 3)).toEqual([
      tok(7, 3),
      tok(7, 4),
      tok(7, 5),
      tok(7, 6),
    ])
    expect(batchTokens({ base: '-1', skip: 0 }, tok(7, 3), 2)).toEqual([tok(7, 1), tok(7, 2), tok(7, 3)])
    expect(batchTokens({ base: '-1', skip: 0 }, tok(7, 2), 2)).toEqual([tok(7, 0), tok(7, 1), tok(7, 2)])
  })

  it('composite tokens otherwise: another incarnation (a fork), fewer records than items, unknown formats', () => {
    expect(batchTokens({ base: tok(7, 3), skip: 0 }, tok(9, 2), 2)).toEqual([tok(7, 3), `${tok(7, 3)},1`, tok(9, 2)])
    expect(batchTokens({ base: tok(7, 0), skip: 0 }, tok(7, 2), 3)).toEqual([
      tok(7, 0),
      `${tok(7, 0)},1`,
      `${tok(7, 0)},2`,
      tok(7, 2),
    ])
    expect(batchTokens({ base: '-1', skip: 0 }, tok(7, 9), 2)).toEqual(['-1', '-1,1', tok(7, 9)])
    expect(batchTokens({ base: 'abc', skip: 0 }, 'abd', 2)).toEqual(['abc', 'abc,1', 'abd'])
  })

  it('orders tokens as strings, then by skip', () => {
    expect(compareTokens(tok(1, 2), tok(1, 3))).toBeLessThan(0)
    expect(compareTokens(`${tok(1, 2)},1`, tok(1, 2))).toBeGreaterThan(0)
    expect(compareTokens(`${tok(1, 2)},1`, tok(1, 3))).toBeLessThan(0)
    expect(compareTokens(`${tok(1, 2)},2`, `${tok(1, 2)},2`)).toBe(0)
  })
})
