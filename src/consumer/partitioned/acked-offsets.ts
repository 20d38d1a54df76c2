import { doubledTo, reallocated } from '../../core/typed-arrays.js'

/** Words the bitmap starts with once an offset is added (1,024 offsets). */
const FIRST_WORDS = 32
/** An empty bitmap keeps at most this many words (a burst of acks out of order is not held on to). */
const KEEP_WORDS = 1024
const NONE = new Uint32Array(0)

/**
 * The offsets of a partition acked out of order (`OwnedPartition`): one bit per offset from a base
 * offset (a multiple of 32), in a `Uint32Array` doubled as it fills and moved down as the lowest
 * words empty. Such offsets lie between the partition's first outstanding offset and its fetch
 * position, close together: a processor's messages without outputs are acked at once, ahead of
 * those waiting for their outputs' writes, and a consumer's concurrent handlers finish out of
 * order. A `Set` made an entry per offset and rehashed as it grew and shrank, young objects a
 * scavenge copied; a bit each in a typed array is outside the collected heap.
 */
export class AckedOffsets {
  /** Offsets held. */
  size = 0
  /** The offset of word 0's lowest bit. */
  private base = 0
  private words: Uint32Array = NONE

  /** Hold `offset` (not held; a non-negative integer). */
  add(offset: number): void {
    if (this.size === 0) {
      // Every bit is clear: start at the offset's word.
      if (this.words.length === 0) this.words = new Uint32Array(FIRST_WORDS)
      this.base = offset - (offset % 32)
    } else if (offset < this.base) this.lower(offset)
    let i = offset - this.base
    if (i >= this.words.length * 32) {
      this.fit(offset)
      i = offset - this.base
    }
    const w = i >>> 5
    this.words[w] = (this.words[w] as number) | (1 << (i & 31))
    this.size++
  }

  has(offset: number): boolean {
    const i = offset - this.base
    if (this.size === 0 || i < 0 || i >= this.words.length * 32) return false
    return ((this.words[i >>> 5] as number) & (1 << (i & 31))) !== 0
  }

  /** Let go of `offset`: whether it was held. */
  delete(offset: number): boolean {
    if (!this.has(offset)) return false
    const i = offset - this.base
    const w = i >>> 5
    this.words[w] = (this.words[w] as number) & ~(1 << (i & 31))
    if (--this.size === 0 && this.words.length > KEEP_WORDS) this.words = NONE
    return true
  }

  /** @internal The offsets held, lowest first. */
  *held(): IterableIterator<number> {
    for (let w = 0; w < this.words.length; w++) {
      const word = this.words[w] as number
      if (word !== 0) for (let b = 0; b < 32; b++) if ((word & (1 << b)) !== 0) yield this.base + w * 32 + b
    }
  }

  clear(): void {
    this.size = 0
    this.words = this.words.length > KEEP_WORDS ? NONE : (this.words.fill(0), this.words)
  }

  /** Make room for `offset` above the words: the empty words below the first held moved out, then doubled as needed. */
  private fit(offset: number): void {
    const words = this.words
    let first = 0
    while (words[first] === 0) first++
    const need = Math.floor((offset - this.base) / 32) - first + 1
    if (need <= words.length) {
      words.copyWithin(0, first)
      words.fill(0, words.length - first)
    } else this.words = reallocated(words, doubledTo(words.length * 2, need), words.subarray(first))
    this.base += first * 32
  }

  /** Make room for `offset` below the base: the words moved up (into a larger array when they must). */
  private lower(offset: number): void {
    const base = offset - (offset % 32)
    const shift = (this.base - base) / 32
    const words = this.words
    let used = words.length
    while (used > 0 && words[used - 1] === 0) used--
    if (used + shift <= words.length) {
      words.copyWithin(shift, 0, used)
      words.fill(0, 0, shift)
    } else this.words = reallocated(words, doubledTo(words.length * 2, used + shift), words.subarray(0, used), shift)
    this.base = base
  }
}
