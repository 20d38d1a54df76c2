import { reallocated } from '../core/typed-arrays.js'

/** Positions the arrays hold once something is stored (none until then: many sources store nothing in a partition). */
const FIRST_CAPACITY = 16
const NONE = new Float64Array(0)

/**
 * Where one output partition stored the outputs of one source (`SourceState.entries`): per input
 * position (the input's offset, the output's sequence number), the offset of the stored output.
 *
 * Positions come in rising order (one input's outputs in order, then the next input's: a call's
 * positions, and the log read back), so they are kept in three flat arrays in that order, found by
 * a binary search, and a position above the highest held is known new without a search (a fresh
 * output, the usual case). A position stored below the highest (a source whose inputs went back:
 * a rewind's outputs to a partition the later inputs did not write to) goes to a map beside them.
 * Dropping the positions below a commit is a search and a cut, not a walk of a map.
 *
 * The arrays are typed arrays, doubled as they fill: their elements are outside the collected
 * heap. A table holds every output stored since its input's last commit, tens of thousands in a
 * busy second; in JavaScript arrays, each copy made as they grew was young, and every scavenge
 * copied the live ones again (decision 234).
 */
export class StoredPositions {
  private offsets: Float64Array = NONE
  private seqs: Float64Array = NONE
  private stored: Float64Array = NONE
  /** Positions in the arrays (from 0; the ones before `start` were dropped). */
  private n = 0
  /** The first position held in the arrays (the ones before it were dropped). */
  private start = 0
  /** Positions stored below the highest held when they came: input offset → stored offsets by sequence number. */
  private below: Map<number, number[]> | undefined
  private topOffset = -1
  private topSeq = -1
  /** Inputs with a position in the arrays (from `start`). */
  private inputs = 0

  /** The stored offset of the output at (`offset`, `seq`), if held. */
  get(offset: number, seq: number): number | undefined {
    if (offset > this.topOffset || (offset === this.topOffset && seq > this.topSeq)) return undefined
    const i = this.find(offset, seq)
    return i >= 0 ? this.stored[i] : this.below?.get(offset)?.[seq]
  }

  /** The output at (`offset`, `seq`) is stored at `at`. */
  set(offset: number, seq: number, at: number): void {
    if (offset > this.topOffset || (offset === this.topOffset && seq > this.topSeq)) {
      // A new input, unless its earlier outputs are the last held (not dropped: a commit may have passed them).
      if (this.start === this.n || offset !== this.topOffset) this.inputs++
      const n = this.n
      if (n === this.offsets.length) this.resize(Math.max(FIRST_CAPACITY, n * 2))
      this.offsets[n] = offset
      this.seqs[n] = seq
      this.stored[n] = at
      this.n = n + 1
      this.topOffset = offset
      this.topSeq = seq
      return
    }
    const i = this.find(offset, seq)
    if (i >= 0) {
      this.stored[i] = at
      return
    }
    const below = (this.below ??= new Map())
    let list = below.get(offset)
    if (list === undefined) below.set(offset, (list = []))
    list[seq] = at
  }

  /** Forget the positions of inputs below `floor` (their input is committed). */
  drop(floor: number): void {
    const lo = this.lowerBound(floor, 0)
    for (let i = this.start; i < lo; i++) if (i === this.start || this.offsets[i] !== this.offsets[i - 1]) this.inputs--
    this.start = lo
    if (this.start > 1024 && this.start * 2 > this.n) {
      // The ones held move to the front; arrays four times larger than they need are halved.
      const { start, n } = this
      this.offsets.copyWithin(0, start, n)
      this.seqs.copyWithin(0, start, n)
      this.stored.copyWithin(0, start, n)
      this.n = n - start
      this.start = 0
      if (this.offsets.length > FIRST_CAPACITY && this.n * 4 < this.offsets.length) this.resize(this.offsets.length / 2)
    }
    if (this.below !== undefined) {
      for (const o of this.below.keys()) if (o < floor) this.below.delete(o)
      if (this.below.size === 0) this.below = undefined
    }
  }

  /** Inputs with outputs held (an input stored out of order may count twice). */
  get size(): number {
    return this.inputs + (this.below?.size ?? 0)
  }

  /** Each input held, in rising order, with its outputs as flat `[seq, stored offset]` pairs. */
  *byInput(): IterableIterator<[number, number[]]> {
    const below = this.below
    const merged = below === undefined ? undefined : new Map<number, number[]>()
    let pairs: number[] = []
    let offset = -1
    for (let i = this.start; i < this.n; i++) {
      const o = this.offsets[i] as number
      if (o !== offset && pairs.length > 0) {
        if (merged === undefined) yield [offset, pairs]
        else merged.set(offset, pairs)
        pairs = []
      }
      offset = o
      pairs.push(this.seqs[i] as number, this.stored[i] as number)
    }
    if (pairs.length > 0) {
      if (merged === undefined) yield [offset, pairs]
      else merged.set(offset, pairs)
    }
    if (below === undefined || merged === undefined) return
    for (const [o, list] of below) {
      const to = merged.get(o) ?? []
      // Sparse by sequence number (up to 2^31 - 1): by the keys set, not 0 .. length.
      for (const seq of Object.keys(list)) to.push(Number(seq), list[Number(seq)] as number)
      merged.set(o, to)
    }
    yield* [...merged].sort((a, b) => a[0] - b[0])
  }

  /** The index in the arrays of (`offset`, `seq`), or -1. */
  private find(offset: number, seq: number): number {
    const i = this.lowerBound(offset, seq)
    return i < this.n && this.offsets[i] === offset && this.seqs[i] === seq ? i : -1
  }

  /** The first index held (from `start`) whose position is not below (`offset`, `seq`) (binary search). */
  private lowerBound(offset: number, seq: number): number {
    let lo = this.start
    let hi = this.n
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      const o = this.offsets[mid] as number
      if (o < offset || (o === offset && (this.seqs[mid] as number) < seq)) lo = mid + 1
      else hi = mid
    }
    return lo
  }

  /** The arrays at `capacity` elements (at least the positions held). */
  private resize(capacity: number): void {
    const n = this.n
    this.offsets = reallocated(this.offsets, capacity, this.offsets.subarray(0, n))
    this.seqs = reallocated(this.seqs, capacity, this.seqs.subarray(0, n))
    this.stored = reallocated(this.stored, capacity, this.stored.subarray(0, n))
  }
}
