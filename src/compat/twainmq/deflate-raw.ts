import { BitWriter, Trees } from './deflate-trees.js'

/*
 * Raw DEFLATE (RFC 1951) exactly as canonical zlib 1.2.x writes it with
 * `deflateInit2(level 4..9, Z_DEFLATED, -15, memLevel 8, Z_DEFAULT_STRATEGY)` and one `Z_FINISH`
 * call — i.e. CPython's `zlib.compress(data, 6, -15)`, which is how TwainMQ 0.1.9 compresses every
 * payload. A port of deflate.c's lazy matcher (`deflate_slow`, `longest_match`, `fill_window`,
 * `slide_hash`); trees.c is in deflate-trees.ts.
 *
 * Why not `zlib.deflateRawSync`: Node bundles Chromium's zlib fork, whose hashing finds other
 * (valid) matches, so its bytes differ from what Python writes (e.g. the golden group-log Commit
 * line of TwainMQ). Any inflater reads either; this one makes our lines byte-identical.
 */

const W_SIZE = 1 << 15
const W_MASK = W_SIZE - 1
const WINDOW_SIZE = 2 * W_SIZE
const HASH_BITS = 8 + 7 // memLevel 8
const HASH_SIZE = 1 << HASH_BITS
const HASH_MASK = HASH_SIZE - 1
const HASH_SHIFT = Math.floor((HASH_BITS + 3 - 1) / 3)
const MIN_MATCH = 3
const MAX_MATCH = 258
const MIN_LOOKAHEAD = MAX_MATCH + MIN_MATCH + 1
const MAX_DIST = W_SIZE - MIN_LOOKAHEAD
const TOO_FAR = 4096
const WIN_INIT = MAX_MATCH
const LIT_BUFSIZE = 1 << (8 + 6)

/** zlib's configuration_table for the lazy levels: good_length, max_lazy, nice_length, max_chain. */
const CONFIG: Record<number, [number, number, number, number]> = {
  4: [4, 4, 16, 16],
  5: [8, 16, 32, 32],
  6: [8, 16, 128, 128],
  7: [8, 32, 128, 256],
  8: [32, 128, 258, 1024],
  9: [32, 258, 258, 4096],
}

class Deflater {
  private readonly window = new Uint8Array(WINDOW_SIZE)
  private readonly prev = new Uint16Array(W_SIZE)
  private readonly head = new Uint16Array(HASH_SIZE)
  private readonly trees = new Trees(LIT_BUFSIZE)
  private readonly w = new BitWriter()
  /** Hash heads set by the last call (cleared at the next instead of all 32768), unless too many. */
  private readonly touched = new Uint16Array(4096)
  private touchedCount = 0
  private input: Uint8Array = new Uint8Array(0)
  private inPos = 0
  private strstart = 0
  private blockStart = 0
  private lookahead = 0
  private insert = 0
  private matchLength = 0
  private prevLength = 0
  private matchAvailable = false
  private matchStart = 0
  private prevMatch = 0
  private insH = 0
  private highWater = 0
  private goodMatch = 0
  private maxLazy = 0
  private niceMatch = 0
  private maxChain = 0

  deflate(input: Uint8Array, level: number): Uint8Array {
    const cfg = CONFIG[level]
    if (!cfg) throw new RangeError(`Compression level ${level} is not supported (4..9)`)
    ;[this.goodMatch, this.maxLazy, this.niceMatch, this.maxChain] = cfg
    this.input = input
    this.inPos = 0
    if (this.touchedCount > this.touched.length) this.head.fill(0)
    else for (let i = 0; i < this.touchedCount; i++) this.head[this.touched[i] as number] = 0
    this.touchedCount = 0
    this.strstart = this.blockStart = this.lookahead = this.insert = this.insH = this.highWater = 0
    this.matchLength = this.prevLength = MIN_MATCH - 1
    this.matchAvailable = false
    this.matchStart = this.prevMatch = 0
    this.trees.initBlock()
    this.w.pos = 0
    this.deflateSlow()
    this.input = new Uint8Array(0)
    return this.w.out.slice(0, this.w.pos)
  }

  private insertString(str: number): number {
    this.insH = ((this.insH << HASH_SHIFT) ^ (this.window[str + MIN_MATCH - 1] as number)) & HASH_MASK
    const head = this.head[this.insH] as number
    this.prev[str & W_MASK] = head
    this.head[this.insH] = str
    if (this.touchedCount < this.touched.length) this.touched[this.touchedCount] = this.insH
    this.touchedCount++
    return head
  }

  private flushBlock(last: boolean): void {
    this.trees.flushBlock(this.w, this.window, this.blockStart, this.strstart - this.blockStart, last)
    this.blockStart = this.strstart
  }

  private deflateSlow(): void {
    const win = this.window
    for (;;) {
      if (this.lookahead < MIN_LOOKAHEAD) {
        this.fillWindow()
        if (this.lookahead === 0) break
      }
      let hashHead = 0
      if (this.lookahead >= MIN_MATCH) hashHead = this.insertString(this.strstart)
      this.prevLength = this.matchLength
      this.prevMatch = this.matchStart
      this.matchLength = MIN_MATCH - 1
      if (hashHead !== 0 && this.prevLength < this.maxLazy && this.strstart - hashHead <= MAX_DIST) {
        this.matchLength = this.longestMatch(hashHead)
        if (this.matchLength <= 5 && this.matchLength === MIN_MATCH && this.strstart - this.matchStart > TOO_FAR) this.matchLength = MIN_MATCH - 1
      }
      if (this.prevLength >= MIN_MATCH && this.matchLength <= this.prevLength) {
        const maxInsert = this.strstart + this.lookahead - MIN_MATCH
        const bflush = this.trees.tally(this.strstart - 1 - this.prevMatch, this.prevLength - MIN_MATCH)
        this.lookahead -= this.prevLength - 1
        this.prevLength -= 2
        do {
          if (++this.strstart <= maxInsert) this.insertString(this.strstart)
        } while (--this.prevLength !== 0)
        this.matchAvailable = false
        this.matchLength = MIN_MATCH - 1
        this.strstart++
        if (bflush) this.flushBlock(false)
      } else if (this.matchAvailable) {
        if (this.trees.tally(0, win[this.strstart - 1] as number)) this.flushBlock(false)
        this.strstart++
        this.lookahead--
      } else {
        this.matchAvailable = true
        this.strstart++
        this.lookahead--
      }
    }
    if (this.matchAvailable) {
      this.trees.tally(0, win[this.strstart - 1] as number)
      this.matchAvailable = false
    }
    this.flushBlock(true)
  }

  private longestMatch(curMatch: number): number {
    const win = this.window
    let chain = this.maxChain
    const scanStart = this.strstart
    let best = this.prevLength
    let nice = this.niceMatch
    const limit = this.strstart > MAX_DIST ? this.strstart - MAX_DIST : 0
    const strend = this.strstart + MAX_MATCH
    let scanEnd1 = win[scanStart + best - 1] as number
    let scanEnd = win[scanStart + best] as number
    if (this.prevLength >= this.goodMatch) chain >>>= 2
    if (nice > this.lookahead) nice = this.lookahead
    do {
      let m = curMatch
      if (win[m + best] !== scanEnd || win[m + best - 1] !== scanEnd1 || win[m] !== win[scanStart] || win[m + 1] !== win[scanStart + 1]) continue
      // scan[2] and match[2] are equal when the hashes are (zlib skips them too).
      let s = scanStart + 2
      m += 2
      do {
        if (
          win[++s] !== win[++m] ||
          win[++s] !== win[++m] ||
          win[++s] !== win[++m] ||
          win[++s] !== win[++m] ||
          win[++s] !== win[++m] ||
          win[++s] !== win[++m] ||
          win[++s] !== win[++m] ||
          win[++s] !== win[++m]
        )
          break
      } while (s < strend)
      const len = MAX_MATCH - (strend - s)
      if (len > best) {
        this.matchStart = curMatch
        best = len
        if (len >= nice) break
        scanEnd1 = win[scanStart + best - 1] as number
        scanEnd = win[scanStart + best] as number
      }
    } while ((curMatch = this.prev[curMatch & W_MASK] as number) > limit && --chain !== 0)
    return best <= this.lookahead ? best : this.lookahead
  }

  private fillWindow(): void {
    const win = this.window
    do {
      let more = WINDOW_SIZE - this.lookahead - this.strstart
      if (this.strstart >= W_SIZE + MAX_DIST) {
        win.copyWithin(0, W_SIZE, W_SIZE + W_SIZE - more)
        this.matchStart -= W_SIZE
        this.strstart -= W_SIZE
        this.blockStart -= W_SIZE
        if (this.insert > this.strstart) this.insert = this.strstart
        this.slideHash()
        more += W_SIZE
      }
      if (this.inPos >= this.input.length) break
      const n = Math.min(more, this.input.length - this.inPos)
      win.set(this.input.subarray(this.inPos, this.inPos + n), this.strstart + this.lookahead)
      this.inPos += n
      this.lookahead += n
      if (this.lookahead + this.insert >= MIN_MATCH) {
        let str = this.strstart - this.insert
        this.insH = win[str] as number
        this.insH = ((this.insH << HASH_SHIFT) ^ (win[str + 1] as number)) & HASH_MASK
        while (this.insert) {
          this.insertString(str)
          str++
          this.insert--
          if (this.lookahead + this.insert < MIN_MATCH) break
        }
      }
    } while (this.lookahead < MIN_LOOKAHEAD && this.inPos < this.input.length)
    // Zero WIN_INIT bytes past the data, so longest_match never compares unset bytes (zlib's high_water).
    if (this.highWater < WINDOW_SIZE) {
      const curr = this.strstart + this.lookahead
      if (this.highWater < curr) {
        const init = Math.min(WINDOW_SIZE - curr, WIN_INIT)
        win.fill(0, curr, curr + init)
        this.highWater = curr + init
      } else if (this.highWater < curr + WIN_INIT) {
        const init = Math.min(curr + WIN_INIT - this.highWater, WINDOW_SIZE - this.highWater)
        win.fill(0, this.highWater, this.highWater + init)
        this.highWater += init
      }
    }
  }

  private slideHash(): void {
    for (const t of [this.head, this.prev]) {
      for (let i = 0; i < t.length; i++) {
        const m = t[i] as number
        t[i] = m >= W_SIZE ? m - W_SIZE : 0
      }
    }
  }
}

let shared: Deflater | undefined

/** `zlib.compress(data, level, -15)` of canonical zlib (CPython's): raw DEFLATE, one block stream. */
export function deflateRaw(data: Uint8Array, level = 6): Buffer {
  shared ??= new Deflater()
  const out = shared.deflate(data, level)
  return Buffer.from(out.buffer, out.byteOffset, out.byteLength)
}
