/**
 * JSON as Python's `json` module reads and writes it, without losing 64-bit integers:
 *
 * - `parseJson` parses like `json.loads`: integers that are not safe JS integers become `bigint`
 *   (TwainMQ's group log writes random 64-bit tags as bare numbers), and Python's extensions
 *   `NaN`, `Infinity` and `-Infinity` are accepted. Texts without long digit runs or extensions go
 *   through the native `JSON.parse`.
 * - `stringifyJson` writes like `json.dumps(v, separators=(",", ":"))` with `ensure_ascii=True`:
 *   `bigint` as bare digits, non-ASCII (and DEL) as `\uXXXX`, non-finite numbers as Python does.
 */

const LONG_DIGITS = /[0-9]{16}/

/** `json.loads` with lossless integers. Throws `SyntaxError` naming the position. */
export function parseJson(text: string): unknown {
  if (!LONG_DIGITS.test(text)) {
    try {
      return JSON.parse(text)
    } catch {
      // NaN / Infinity, or really invalid: the full parser decides and names the position.
    }
  }
  return new Parser(text).document()
}

class Parser {
  private i = 0
  constructor(private readonly s: string) {}

  document(): unknown {
    const v = this.value()
    this.ws()
    if (this.i < this.s.length) this.fail('Extra data')
    return v
  }

  private fail(what: string): never {
    throw new SyntaxError(`${what} at position ${this.i} of JSON text`)
  }

  private ws(): void {
    const s = this.s
    while (this.i < s.length) {
      const c = s.charCodeAt(this.i)
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) this.i++
      else break
    }
  }

  private word(w: string, v: unknown): unknown {
    if (this.s.startsWith(w, this.i)) {
      this.i += w.length
      return v
    }
    return this.fail('Expecting value')
  }

  private value(): unknown {
    this.ws()
    const c = this.s[this.i]
    switch (c) {
      case '{':
        return this.object()
      case '[':
        return this.array()
      case '"':
        return this.string()
      case 't':
        return this.word('true', true)
      case 'f':
        return this.word('false', false)
      case 'n':
        return this.word('null', null)
      case 'N':
        return this.word('NaN', Number.NaN)
      case 'I':
        return this.word('Infinity', Number.POSITIVE_INFINITY)
      default:
        if (c === '-' && this.s.startsWith('-Infinity', this.i)) return this.word('-Infinity', Number.NEGATIVE_INFINITY)
        return this.number()
    }
  }

  private object(): Record<string, unknown> {
    const out: Record<string, unknown> = {}
    this.i++
    this.ws()
    if (this.s[this.i] === '}') {
      this.i++
      return out
    }
    for (;;) {
      this.ws()
      if (this.s[this.i] !== '"') this.fail('Expecting property name enclosed in double quotes')
      const k = this.string()
      this.ws()
      if (this.s[this.i] !== ':') this.fail("Expecting ':' delimiter")
      this.i++
      const v = this.value()
      // An own property even for "__proto__" (as JSON.parse does).
      Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true })
      this.ws()
      const c = this.s[this.i++]
      if (c === '}') return out
      if (c !== ',') {
        this.i--
        this.fail("Expecting ',' delimiter")
      }
    }
  }

  private array(): unknown[] {
    const out: unknown[] = []
    this.i++
    this.ws()
    if (this.s[this.i] === ']') {
      this.i++
      return out
    }
    for (;;) {
      out.push(this.value())
      this.ws()
      const c = this.s[this.i++]
      if (c === ']') return out
      if (c !== ',') {
        this.i--
        this.fail("Expecting ',' delimiter")
      }
    }
  }

  private string(): string {
    const start = this.i
    let j = start + 1
    const s = this.s
    // Find the closing quote, skipping escapes; then let JSON.parse decode the escapes.
    for (;;) {
      if (j >= s.length) this.fail('Unterminated string starting')
      const c = s.charCodeAt(j)
      if (c === 0x22) break
      if (c === 0x5c) j++
      j++
    }
    this.i = j + 1
    try {
      return JSON.parse(s.slice(start, j + 1)) as string
    } catch {
      this.i = start
      return this.fail('Invalid string')
    }
  }

  private number(): number | bigint {
    const m = /^-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?/.exec(this.s.slice(this.i, this.i + 4096))
    if (!m || m[0] === '' || m[0] === '-') return this.fail('Expecting value')
    const lit = m[0]
    this.i += lit.length
    if (m[1] === undefined && m[2] === undefined) {
      const n = Number(lit)
      if (Number.isSafeInteger(n)) return n === 0 ? 0 : n // Python ints have no -0
      return BigInt(lit)
    }
    return Number(lit)
  }
}

const NON_ASCII = /[\u007f-\uffff]/g
const HAS_NON_ASCII = /[\u007f-\uffff]/
const hex4 = (c: string) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0')

/** Escape what `ensure_ascii=True` escapes in a JSON text made by `JSON.stringify`. */
export function ensureAscii(json: string): string {
  return HAS_NON_ASCII.test(json) ? json.replace(NON_ASCII, hex4) : json
}

/**
 * `json.dumps(value, separators=(",", ":"))` (ensure_ascii): like `JSON.stringify` plus `bigint` as
 * bare digits and `NaN`/`Infinity`/`-Infinity` as Python writes them. `undefined` members are
 * dropped (as `JSON.stringify` does); `toJSON` is honoured.
 */
export function stringifyJson(value: unknown): string {
  const out = write(value)
  if (out === undefined) throw new TypeError(`A ${typeof value} value is not JSON-serialisable`)
  return ensureAscii(out)
}

function write(v: unknown): string | undefined {
  if (v !== null && typeof v === 'object' && typeof (v as { toJSON?: unknown }).toJSON === 'function') {
    v = (v as { toJSON: () => unknown }).toJSON()
  }
  switch (typeof v) {
    case 'bigint':
      return v.toString()
    case 'number':
      if (Number.isNaN(v)) return 'NaN'
      if (!Number.isFinite(v)) return v > 0 ? 'Infinity' : '-Infinity'
      return JSON.stringify(v)
    case 'string':
    case 'boolean':
      return JSON.stringify(v)
    case 'object': {
      if (v === null) return 'null'
      if (Array.isArray(v)) return '[' + v.map((x) => write(x) ?? 'null').join(',') + ']'
      const parts: string[] = []
      for (const [k, x] of Object.entries(v)) {
        const w = write(x)
        if (w !== undefined) parts.push(JSON.stringify(k) + ':' + w)
      }
      return '{' + parts.join(',') + '}'
    }
    default:
      return undefined
  }
}
