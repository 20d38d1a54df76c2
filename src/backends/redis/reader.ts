import type { KeyCodec } from '../../core/keys.js'
import type { Message } from '../../core/types.js'
import type { PartitionReader } from '../backend.js'
import { decodeEntry, decodePacked, parseHeader } from './entry-codec.js'
import { isConnectionError, redisError, sleep } from './connection.js'
import type { RedisKeys } from './keys.js'
import type { Scripts } from './scripts.js'

/** Most entries one read script call returns. */
const READ_MAX = 1024
/** Attempts of a read cut by dropped connections (about 15 s in all). */
const READ_ATTEMPTS = 20

/** A stream entry as a blocking read returned it. */
export interface RawEntry {
  offset: number
  record: Buffer
  producerId: string
}

/** The entries a partition watcher received last (contiguous offsets). */
export interface RecentEntries {
  first: number
  entries: RawEntry[]
}

/**
 * Reads one partition forward: from the entries its partition watcher just received when they
 * cover the next offset (no round trip), else with the `read` script (XRANGE packed into one reply).
 * After two full reads in a row it asks for the next chunk before decoding the current one, so Redis
 * works on it while this process decodes (history, catching up); a seek drops that read-ahead.
 */
export class RedisPartitionReader implements PartitionReader {
  next: number
  private closed = false
  /** Consecutive full reads without a seek. */
  private streak = 0
  private ahead: { from: number; count: number; blob: Promise<Buffer> } | undefined

  constructor(
    private readonly scripts: Scripts,
    private readonly keys: RedisKeys,
    readonly topic: string,
    readonly partition: number,
    private readonly codec: KeyCodec,
    from: number,
    /** What the partition's watcher received last, if it runs. */
    private readonly recent: () => RecentEntries | undefined,
    private readonly onClose: (r: RedisPartitionReader) => void,
  ) {
    this.next = Math.max(0, from)
  }

  async read(max: number): Promise<Message[]> {
    if (this.closed || max <= 0) return []
    const hit = this.fromRecent(max)
    if (hit) return hit
    const count = Math.min(max, READ_MAX)
    const a = this.ahead
    this.ahead = undefined
    const from = this.next
    let blob = a && a.from === from && a.count === count ? await a.blob.catch(() => this.fetch(from, count, false)) : await this.fetch(from, count, false)
    if (this.closed || blob.length === 0) {
      this.streak = 0
      return []
    }
    let h = parseHeader(blob)
    if (h.last - h.first + 1 !== h.count) {
      // Not dense (only if someone deleted entries by hand): ask for an offset per entry.
      blob = await this.fetch(from, count, true)
      if (this.closed || blob.length === 0) return []
      h = { ...parseHeader(blob), ids: true }
    }
    this.streak = h.count >= count ? this.streak + 1 : 0
    if (this.streak >= 2) {
      const ahead = { from: h.last + 1, count, blob: this.fetch(h.last + 1, count, false) }
      ahead.blob.catch(() => undefined) // used (or dropped) by the next read
      this.ahead = ahead
    }
    const out: Message[] = []
    decodePacked(blob, h, this.codec, this.topic, this.partition, out)
    this.next = h.last + 1
    return out
  }

  /** One `read` script call; rides out dropped connections (reads are idempotent). */
  private async fetch(from: number, count: number, ids: boolean): Promise<Buffer> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.scripts.call('read', [this.keys.stream(this.topic, this.partition)], [from, count, ids ? '1' : '0'])
      } catch (e) {
        if (this.closed) return Buffer.alloc(0)
        if (!isConnectionError(e) || attempt >= READ_ATTEMPTS) throw redisError(`Read of "${this.topic}" partition ${this.partition} at offset ${from} failed`, e)
        await sleep(Math.min(25 * 2 ** attempt, 1000))
      }
    }
  }

  private fromRecent(max: number): Message[] | undefined {
    const r = this.recent()
    if (!r) return undefined
    const i = this.next - r.first
    if (i < 0 || i >= r.entries.length || (r.entries[i] as RawEntry).offset !== this.next) return undefined
    const out: Message[] = []
    for (let k = i; k < r.entries.length && out.length < max; k++) {
      const e = r.entries[k] as RawEntry
      if (e.offset !== this.next) break
      out.push(decodeEntry(e.record, this.codec, this.topic, this.partition, e.offset, e.producerId))
      this.next = e.offset + 1
    }
    return out
  }

  seek(offset: number): void {
    this.next = Math.max(0, offset)
    this.streak = 0
    this.ahead = undefined
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    this.ahead = undefined
    this.onClose(this)
  }
}
