import { describe, expect, it } from 'vitest'
import { hash64, type Key } from '../../src/index.js'
import { golden, pythonAvailable, runScript } from '../helpers/twainmq.js'

const keyOf = (h: { key: string; string: boolean }): Key => (h.string ? h.key : BigInt(h.key))

describe("hash64 against Python's partition_hash64 (unbounded ints, no 64-bit masking)", () => {
  it(`agrees on the ${golden().hash64.length} checked-in pairs (numbers up to 2^64-2, empty, ASCII and non-ASCII strings)`, () => {
    for (const h of golden().hash64)
      expect(hash64(keyOf(h), h.partitions), `${h.key} % ${h.partitions}`).toBe(h.partition)
  })

  it('agrees on keys no fixture lists: random integers and strings, hashed by python3 now', () => {
    const keys: Key[] = []
    for (let i = 0; i < 150; i++) {
      const r = Math.random()
      if (r < 0.3) keys.push(Math.floor(Math.random() * 2 ** 32))
      else if (r < 0.6) keys.push(BigInt.asUintN(64, BigInt(Math.floor(Math.random() * 2 ** 53)) * 4099n + BigInt(i)))
      else
        keys.push(
          Array.from({ length: 1 + (i % 12) }, () =>
            String.fromCodePoint(32 + Math.floor(Math.random() * (i % 3 === 0 ? 2000 : 90))),
          ).join(''),
        )
    }
    const parts = [2, 3, 6, 7, 11, 64, 97, 1000]
    const pairs = keys.flatMap((k) => parts.map((p) => [k, p] as const))
    if (!pythonAvailable()) {
      // No python3: the checked-in pairs above are the reference; here, check the range and determinism.
      for (const [k, p] of pairs) expect(hash64(k, p)).toBe(hash64(k, p))
      return
    }
    const input = JSON.stringify(pairs.map(([k, p]) => [typeof k === 'string' ? { str: k } : { int: String(k) }, p]))
    const fromPython = JSON.parse(runScript(['hash'], input)) as number[]
    expect(pairs.map(([k, p]) => hash64(k, p))).toEqual(fromPython)
  })
})
