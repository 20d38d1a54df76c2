/*
 * The Huffman-coding half of canonical zlib's deflate (trees.c of zlib 1.2.13), ported so that
 * twainmq writes TwainMQ payloads byte-identical to CPython's `zlib.compress(p, 6, -15)`. Node's
 * bundled zlib is Chromium's fork, whose match finder makes other (valid) choices, so its output
 * differs from canonical zlib's even for short payloads. Every tie-break below follows trees.c.
 */

export const LITERALS = 256
export const LENGTH_CODES = 29
export const L_CODES = LITERALS + 1 + LENGTH_CODES
export const D_CODES = 30
export const BL_CODES = 19
export const HEAP_SIZE = 2 * L_CODES + 1
export const MAX_BITS = 15
export const END_BLOCK = 256
const MAX_BL_BITS = 7
const REP_3_6 = 16
const REPZ_3_10 = 17
const REPZ_11_138 = 18

const EXTRA_LBITS = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0]
const EXTRA_DBITS = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13]
const EXTRA_BLBITS = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 3, 7]
const BL_ORDER = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]

/** A Huffman tree: frequencies, then (after building) code lengths and codes; `dad` while building. */
export interface Tree {
  freq: Uint32Array
  len: Uint16Array
  code: Uint16Array
  dad: Uint16Array
}

const tree = (n: number): Tree => ({ freq: new Uint32Array(n), len: new Uint16Array(n), code: new Uint16Array(n), dad: new Uint16Array(n) })

function biReverse(code: number, len: number): number {
  let res = 0
  do {
    res |= code & 1
    code >>>= 1
    res <<= 1
  } while (--len > 0)
  return res >>> 1
}

function genCodes(t: Tree, maxCode: number, blCount: Uint16Array): void {
  const next = new Uint16Array(MAX_BITS + 1)
  let code = 0
  for (let bits = 1; bits <= MAX_BITS; bits++) {
    code = (code + (blCount[bits - 1] as number)) << 1
    next[bits] = code
  }
  for (let n = 0; n <= maxCode; n++) {
    const len = t.len[n] as number
    if (len === 0) continue
    t.code[n] = biReverse((next[len] as number)++, len)
  }
}

// tr_static_init: the length/distance code tables and the static trees.
export const LENGTH_CODE = new Uint8Array(256)
const BASE_LENGTH = new Int32Array(LENGTH_CODES)
export const DIST_CODE = new Uint8Array(512)
const BASE_DIST = new Int32Array(D_CODES)
const STATIC_L = tree(L_CODES + 2)
const STATIC_D = tree(D_CODES)
{
  let length = 0
  let code = 0
  for (code = 0; code < LENGTH_CODES - 1; code++) {
    BASE_LENGTH[code] = length
    for (let n = 0; n < 1 << (EXTRA_LBITS[code] as number); n++) LENGTH_CODE[length++] = code
  }
  LENGTH_CODE[length - 1] = code
  let dist = 0
  for (code = 0; code < 16; code++) {
    BASE_DIST[code] = dist
    for (let n = 0; n < 1 << (EXTRA_DBITS[code] as number); n++) DIST_CODE[dist++] = code
  }
  dist >>= 7
  for (; code < D_CODES; code++) {
    BASE_DIST[code] = dist << 7
    for (let n = 0; n < 1 << ((EXTRA_DBITS[code] as number) - 7); n++) DIST_CODE[256 + dist++] = code
  }
  const blCount = new Uint16Array(MAX_BITS + 1)
  let n = 0
  while (n <= 143) (STATIC_L.len[n++] = 8), blCount[8]++
  while (n <= 255) (STATIC_L.len[n++] = 9), blCount[9]++
  while (n <= 279) (STATIC_L.len[n++] = 7), blCount[7]++
  while (n <= 287) (STATIC_L.len[n++] = 8), blCount[8]++
  genCodes(STATIC_L, L_CODES + 1, blCount)
  for (n = 0; n < D_CODES; n++) {
    STATIC_D.len[n] = 5
    STATIC_D.code[n] = biReverse(n, 5)
  }
}

const dCode = (dist: number) => (dist < 256 ? DIST_CODE[dist] : DIST_CODE[256 + (dist >>> 7)]) as number

interface Desc {
  t: Tree
  stree: Tree | undefined
  extra: number[]
  base: number
  elems: number
  maxLength: number
  maxCode: number
}

/** Bit output, LSB first (zlib's send_bits / bi_windup). */
export class BitWriter {
  out = new Uint8Array(1024)
  pos = 0
  private bits = 0
  private count = 0

  private room(n: number): void {
    if (this.pos + n <= this.out.length) return
    const grown = new Uint8Array(Math.max(this.out.length * 2, this.pos + n + 1024))
    grown.set(this.out.subarray(0, this.pos))
    this.out = grown
  }

  send(value: number, length: number): void {
    this.bits |= value << this.count
    this.count += length
    if (this.count >= 16) {
      this.room(2)
      this.out[this.pos++] = this.bits & 0xff
      this.out[this.pos++] = (this.bits >>> 8) & 0xff
      this.bits >>>= 16
      this.count -= 16
    }
  }

  /** Flush to a byte boundary. */
  windup(): void {
    this.room(2)
    if (this.count > 8) {
      this.out[this.pos++] = this.bits & 0xff
      this.out[this.pos++] = (this.bits >>> 8) & 0xff
    } else if (this.count > 0) this.out[this.pos++] = this.bits & 0xff
    this.bits = 0
    this.count = 0
  }

  bytes(src: Uint8Array, start: number, end: number): void {
    this.room(end - start)
    this.out.set(src.subarray(start, end), this.pos)
    this.pos += end - start
  }
}

/** The per-block state of trees.c: symbol buffer, frequencies, and the block encoder. */
export class Trees {
  readonly l: Desc = { t: tree(HEAP_SIZE), stree: STATIC_L, extra: EXTRA_LBITS, base: LITERALS + 1, elems: L_CODES, maxLength: MAX_BITS, maxCode: 0 }
  readonly d: Desc = { t: tree(2 * D_CODES + 1), stree: STATIC_D, extra: EXTRA_DBITS, base: 0, elems: D_CODES, maxLength: MAX_BITS, maxCode: 0 }
  readonly bl: Desc = { t: tree(2 * BL_CODES + 1), stree: undefined, extra: EXTRA_BLBITS, base: 0, elems: BL_CODES, maxLength: MAX_BL_BITS, maxCode: 0 }
  private readonly heap = new Int32Array(HEAP_SIZE)
  private heapLen = 0
  private heapMax = 0
  private readonly depth = new Uint8Array(HEAP_SIZE)
  private readonly blCount = new Uint16Array(MAX_BITS + 1)
  private optLen = 0
  private staticLen = 0
  /** (dist, lc) pairs: dist 0 = literal lc. */
  readonly symDist: Uint16Array
  readonly symLc: Uint8Array
  symNext = 0
  readonly symEnd: number

  constructor(litBufsize: number) {
    this.symDist = new Uint16Array(litBufsize)
    this.symLc = new Uint8Array(litBufsize)
    this.symEnd = litBufsize - 1
    this.initBlock()
  }

  initBlock(): void {
    this.l.t.freq.fill(0, 0, L_CODES)
    this.d.t.freq.fill(0, 0, D_CODES)
    this.bl.t.freq.fill(0, 0, BL_CODES)
    this.l.t.freq[END_BLOCK] = 1
    this.optLen = this.staticLen = 0
    this.symNext = 0
  }

  /** _tr_tally: true when the block must be flushed. */
  tally(dist: number, lc: number): boolean {
    this.symDist[this.symNext] = dist
    this.symLc[this.symNext++] = lc
    if (dist === 0) this.l.t.freq[lc]++
    else {
      this.l.t.freq[(LENGTH_CODE[lc] as number) + LITERALS + 1]++
      this.d.t.freq[dCode(dist - 1)]++
    }
    return this.symNext === this.symEnd
  }

  private smaller(t: Tree, n: number, m: number): boolean {
    const fn = t.freq[n] as number
    const fm = t.freq[m] as number
    return fn < fm || (fn === fm && (this.depth[n] as number) <= (this.depth[m] as number))
  }

  private pqdownheap(t: Tree, k: number): void {
    const heap = this.heap
    const v = heap[k] as number
    let j = k << 1
    while (j <= this.heapLen) {
      if (j < this.heapLen && this.smaller(t, heap[j + 1] as number, heap[j] as number)) j++
      if (this.smaller(t, v, heap[j] as number)) break
      heap[k] = heap[j] as number
      k = j
      j <<= 1
    }
    heap[k] = v
  }

  private genBitlen(desc: Desc): void {
    const { t, stree, extra, base, maxLength, maxCode } = desc
    const heap = this.heap
    this.blCount.fill(0)
    t.len[heap[this.heapMax] as number] = 0
    let overflow = 0
    let h: number
    for (h = this.heapMax + 1; h < HEAP_SIZE; h++) {
      const n = heap[h] as number
      let bits = (t.len[t.dad[n] as number] as number) + 1
      if (bits > maxLength) {
        bits = maxLength
        overflow++
      }
      t.len[n] = bits
      if (n > maxCode) continue
      this.blCount[bits]++
      const xbits = n >= base ? (extra[n - base] as number) : 0
      const f = t.freq[n] as number
      this.optLen += f * (bits + xbits)
      if (stree) this.staticLen += f * ((stree.len[n] as number) + xbits)
    }
    if (overflow === 0) return
    do {
      let bits = maxLength - 1
      while (this.blCount[bits] === 0) bits--
      this.blCount[bits]--
      this.blCount[bits + 1] = (this.blCount[bits + 1] as number) + 2
      this.blCount[maxLength]--
      overflow -= 2
    } while (overflow > 0)
    for (let bits = maxLength; bits !== 0; bits--) {
      let n = this.blCount[bits] as number
      while (n !== 0) {
        const m = heap[--h] as number
        if (m > maxCode) continue
        if (t.len[m] !== bits) {
          this.optLen += (bits - (t.len[m] as number)) * (t.freq[m] as number)
          t.len[m] = bits
        }
        n--
      }
    }
  }

  private buildTree(desc: Desc): void {
    const { t, stree, elems } = desc
    const heap = this.heap
    let maxCode = -1
    this.heapLen = 0
    this.heapMax = HEAP_SIZE
    for (let n = 0; n < elems; n++) {
      if (t.freq[n] !== 0) {
        heap[++this.heapLen] = maxCode = n
        this.depth[n] = 0
      } else t.len[n] = 0
    }
    while (this.heapLen < 2) {
      const node = (heap[++this.heapLen] = maxCode < 2 ? ++maxCode : 0)
      t.freq[node] = 1
      this.depth[node] = 0
      this.optLen--
      if (stree) this.staticLen -= stree.len[node] as number
    }
    desc.maxCode = maxCode
    for (let n = this.heapLen >> 1; n >= 1; n--) this.pqdownheap(t, n)
    let node = elems
    do {
      const n = heap[1] as number
      heap[1] = heap[this.heapLen--] as number
      this.pqdownheap(t, 1)
      const m = heap[1] as number
      heap[--this.heapMax] = n
      heap[--this.heapMax] = m
      t.freq[node] = (t.freq[n] as number) + (t.freq[m] as number)
      this.depth[node] = Math.max(this.depth[n] as number, this.depth[m] as number) + 1
      t.dad[n] = t.dad[m] = node
      heap[1] = node++
      this.pqdownheap(t, 1)
    } while (this.heapLen >= 2)
    heap[--this.heapMax] = heap[1] as number
    this.genBitlen(desc)
    genCodes(t, maxCode, this.blCount)
  }

  /** scan_tree (send = false: count bit-length codes) and send_tree (send = true). */
  private walkTree(t: Tree, maxCode: number, w: BitWriter | undefined): void {
    const bl = this.bl.t
    let prevlen = -1
    let nextlen = t.len[0] as number
    let count = 0
    let maxCount = 7
    let minCount = 4
    if (nextlen === 0) (maxCount = 138), (minCount = 3)
    if (!w) t.len[maxCode + 1] = 0xffff // guard
    const code = (c: number) => w!.send(bl.code[c] as number, bl.len[c] as number)
    for (let n = 0; n <= maxCode; n++) {
      const curlen = nextlen
      nextlen = t.len[n + 1] as number
      if (++count < maxCount && curlen === nextlen) continue
      else if (count < minCount) {
        if (w) {
          do code(curlen)
          while (--count !== 0)
        } else bl.freq[curlen] = (bl.freq[curlen] as number) + count
      } else if (curlen !== 0) {
        if (w) {
          if (curlen !== prevlen) {
            code(curlen)
            count--
          }
          code(REP_3_6)
          w.send(count - 3, 2)
        } else {
          if (curlen !== prevlen) bl.freq[curlen]++
          bl.freq[REP_3_6]++
        }
      } else if (count <= 10) {
        if (w) {
          code(REPZ_3_10)
          w.send(count - 3, 3)
        } else bl.freq[REPZ_3_10]++
      } else if (w) {
        code(REPZ_11_138)
        w.send(count - 11, 7)
      } else bl.freq[REPZ_11_138]++
      count = 0
      prevlen = curlen
      if (nextlen === 0) (maxCount = 138), (minCount = 3)
      else if (curlen === nextlen) (maxCount = 6), (minCount = 3)
      else (maxCount = 7), (minCount = 4)
    }
  }

  private buildBlTree(): number {
    this.walkTree(this.l.t, this.l.maxCode, undefined)
    this.walkTree(this.d.t, this.d.maxCode, undefined)
    this.buildTree(this.bl)
    let max: number
    for (max = BL_CODES - 1; max >= 3; max--) if (this.bl.t.len[BL_ORDER[max] as number] !== 0) break
    this.optLen += 3 * (max + 1) + 5 + 5 + 4
    return max
  }

  private compressBlock(w: BitWriter, lt: Tree, dt: Tree): void {
    for (let sx = 0; sx < this.symNext; sx++) {
      let dist = this.symDist[sx] as number
      let lc = this.symLc[sx] as number
      if (dist === 0) w.send(lt.code[lc] as number, lt.len[lc] as number)
      else {
        let code = LENGTH_CODE[lc] as number
        w.send(lt.code[code + LITERALS + 1] as number, lt.len[code + LITERALS + 1] as number)
        let extra = EXTRA_LBITS[code] as number
        if (extra !== 0) w.send(lc - (BASE_LENGTH[code] as number), extra)
        dist--
        code = dCode(dist)
        w.send(dt.code[code] as number, dt.len[code] as number)
        extra = EXTRA_DBITS[code] as number
        if (extra !== 0) w.send(dist - (BASE_DIST[code] as number), extra)
      }
    }
    w.send(lt.code[END_BLOCK] as number, lt.len[END_BLOCK] as number)
  }

  /** _tr_flush_block: emit the block (stored when `window` still holds it and that is smallest). */
  flushBlock(w: BitWriter, window: Uint8Array, blockStart: number, storedLen: number, last: boolean): void {
    this.buildTree(this.l)
    this.buildTree(this.d)
    const maxBlindex = this.buildBlTree()
    let optLenb = (this.optLen + 3 + 7) >>> 3
    const staticLenb = (this.staticLen + 3 + 7) >>> 3
    if (staticLenb <= optLenb) optLenb = staticLenb
    const lastBit = last ? 1 : 0
    if (storedLen + 4 <= optLenb && blockStart >= 0) {
      w.send(lastBit, 3) // STORED_BLOCK = 0
      w.windup()
      w.send(storedLen & 0xffff, 16)
      w.send(~storedLen & 0xffff, 16)
      w.bytes(window, blockStart, blockStart + storedLen)
    } else if (staticLenb === optLenb) {
      w.send((1 << 1) + lastBit, 3)
      this.compressBlock(w, STATIC_L, STATIC_D)
    } else {
      w.send((2 << 1) + lastBit, 3)
      const lcodes = this.l.maxCode + 1
      const dcodes = this.d.maxCode + 1
      const blcodes = maxBlindex + 1
      w.send(lcodes - 257, 5)
      w.send(dcodes - 1, 5)
      w.send(blcodes - 4, 4)
      for (let rank = 0; rank < blcodes; rank++) w.send(this.bl.t.len[BL_ORDER[rank] as number] as number, 3)
      this.walkTree(this.l.t, lcodes - 1, w)
      this.walkTree(this.d.t, dcodes - 1, w)
      this.compressBlock(w, this.l.t, this.d.t)
    }
    this.initBlock()
    if (last) w.windup()
  }
}
