import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { TopicNotFoundError, backendError } from '../../core/errors.js'

/** Extension of a TwainMQ partition chunk: `<root>/<topic>/<P>-<YYYYMMDD>_<start>.tmf`. */
export const CHUNK_EXT = '.tmf'

/** One chunk file of a partition: the lines of one UTC day, the first at offset `start`. */
export interface Chunk {
  partition: number
  /** `YYYYMMDD`: the UTC day a producer created the file on. */
  day: string
  /** Offset of the file's first line within the partition. */
  start: number
  name: string
}

const NAME_RE = /^([0-9]+)-([0-9]{8})_([0-9]+)\.tmf$/

/**
 * Parse a chunk file name; undefined for anything else. The partition must be written as Python
 * writes it (`str(p)`, no leading zeros), since Python matches `stem.split("-")[0] == str(p)`.
 */
export function parseChunkName(name: string): Chunk | undefined {
  const m = NAME_RE.exec(name)
  if (!m) return undefined
  const partition = Number(m[1])
  const start = Number(m[3])
  if (String(partition) !== m[1] || !Number.isSafeInteger(start)) return undefined
  return { partition, day: m[2] as string, start, name }
}

export const chunkName = (partition: number, day: string, start: number) => `${partition}-${day}_${start}${CHUNK_EXT}`

/** The UTC day of a time as `YYYYMMDD` (Python's `f"{datetime.now(timezone.utc):%Y%m%d}"`). */
export function utcDay(ms: number = Date.now()): string {
  const d = new Date(ms)
  return `${d.getUTCFullYear()}${String(d.getUTCMonth() + 1).padStart(2, '0')}${String(d.getUTCDate()).padStart(2, '0')}`
}

/**
 * Reading order of a partition's chunks: by start offset, then by day (Python sorts by
 * `(start, path)`), so an empty day chunk sorts before the next chunk that shares its start.
 */
export function compareChunks(a: Chunk, b: Chunk): number {
  return a.start - b.start || (a.day < b.day ? -1 : a.day > b.day ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
}

/** Index of the chunk holding `offset`: the last whose start is ≤ offset (0 when none is). */
export function chunkFor(chunks: readonly Chunk[], offset: number): number {
  let lo = 0
  let hi = chunks.length - 1
  let best = 0
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    if ((chunks[mid] as Chunk).start <= offset) {
      best = mid
      lo = mid + 1
    } else hi = mid - 1
  }
  return best
}

/** A directory's mtime this close to the listing may still change within the same clock tick. */
const RACY_NS = 50_000_000n

/**
 * The chunk files of one topic directory, by partition, in reading order. The listing is cached and
 * re-read only when the directory changed (its mtime or inode), so a tail that reaches the end of a
 * chunk costs one `stat`, not a `readdir`. A listing taken within 50 ms of the directory's mtime is
 * not trusted (two creations in one coarse clock tick leave the same mtime).
 */
export class ChunkDirectory {
  private mtime = -1n
  private ino = -1n
  private trusted = false
  private byPartition = new Map<number, Chunk[]>()
  /** Incremented at every re-listing: while it is unchanged, the directory's files are the same. */
  version = 0

  constructor(
    readonly dir: string,
    readonly topic: string,
  ) {}

  /** The chunks of `partition`, in reading order (an empty array when it has none yet). */
  partition(partition: number): readonly Chunk[] {
    this.refresh()
    return this.byPartition.get(partition) ?? []
  }

  /** Forget the cached listing (after creating a chunk). */
  invalidate(): void {
    this.trusted = false
  }

  private refresh(): void {
    let st
    try {
      st = statSync(this.dir, { bigint: true })
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT')
        throw new TopicNotFoundError(`Topic "${this.topic}" does not exist (no ${this.dir})`)
      throw backendError(`Cannot stat ${this.dir}`, e)
    }
    if (this.trusted && st.mtimeNs === this.mtime && st.ino === this.ino) return
    let names: string[]
    try {
      names = readdirSync(this.dir)
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT')
        throw new TopicNotFoundError(`Topic "${this.topic}" does not exist (no ${this.dir})`)
      throw backendError(`Cannot list ${this.dir}`, e)
    }
    const map = new Map<number, Chunk[]>()
    for (const n of names) {
      const c = parseChunkName(n)
      if (!c) continue
      let list = map.get(c.partition)
      if (!list) map.set(c.partition, (list = []))
      list.push(c)
    }
    for (const list of map.values()) list.sort(compareChunks)
    this.byPartition = map
    this.version++
    this.mtime = st.mtimeNs
    this.ino = st.ino
    this.trusted = BigInt(Date.now()) * 1_000_000n - st.mtimeNs > RACY_NS
  }

  /** Path of a chunk file. */
  path(c: Chunk): string {
    return join(this.dir, c.name)
  }
}
