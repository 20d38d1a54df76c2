/**
 * A response body built from raw records (`PageBody`, copying runs of values with one copy and
 * in-place moves, `ValueRun`) is exactly the values joined (JSON: `[v1,v2,…]`; bytes: back to
 * back), whatever the gaps between them in their source buffers, the buffers' order, the
 * flushes between records and the room the body starts with.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { RawRecord } from '../src/backends/record.js'
import { ValueKind } from '../src/core/values.js'
import { PageBody } from '../src/gateway/reads/page-body.js'

/** One source buffer: values (JSON strings of ASCII letters) with random gaps before each. */
const sourceArb = fc.array(
  fc.record({
    gap: fc.integer({ min: 1, max: 40 }),
    text: fc.string({ unit: fc.constantFrom('a', 'b', 'é', 'z'), maxLength: 30 }),
  }),
  { minLength: 1, maxLength: 25 },
)

function laidOut(values: Array<{ gap: number; text: string }>): { buf: Buffer; places: Array<[number, number]> } {
  const parts: Buffer[] = []
  const places: Array<[number, number]> = []
  let at = 0
  for (const v of values) {
    parts.push(Buffer.alloc(v.gap, 0xee)) // record headers: never copied into the body
    at += v.gap
    const bytes = Buffer.from(JSON.stringify(v.text), 'utf8')
    parts.push(bytes)
    places.push([at, at + bytes.length])
    at += bytes.length
  }
  return { buf: Buffer.concat(parts), places }
}

describe('PageBody', () => {
  it('joins the values of runs of raw records exactly, in JSON and byte bodies', () => {
    fc.assert(
      fc.property(
        fc.array(sourceArb, { minLength: 1, maxLength: 4 }),
        fc.boolean(),
        fc.integer({ min: 0, max: 2000 }),
        fc.array(fc.boolean(), { maxLength: 100 }),
        (sources, json, expect0, flushes) => {
          const body = new PageBody(json ? 'application/json' : 'application/octet-stream', expect0)
          const expected: string[] = []
          let k = 0
          for (const values of sources) {
            const { buf, places } = laidOut(values)
            for (const [start, end] of places) {
              const raw: RawRecord = {
                offset: k,
                timestamp: 0,
                type: undefined,
                headers: undefined,
                kind: ValueKind.Json,
                buf,
                start,
                end,
              }
              body.addRaw(raw)
              expected.push(buf.toString('utf8', start, end))
              if (flushes[k++ % Math.max(1, flushes.length)] === true) body.flush()
            }
            body.flush() // before the source buffer changes
            buf.fill(0x21) // a reader reusing its buffer: nothing flushed may depend on it
          }
          const text = body.finish().toString('utf8')
          expect(text).toBe(json ? `[${expected.join(',')}]` : expected.join(''))
          expect(body.count).toBe(expected.length)
          expect(body.bytes).toBe(expected.reduce((n, s) => n + Buffer.byteLength(s), 0))
        },
      ),
      { numRuns: 500 },
    )
  })
})
