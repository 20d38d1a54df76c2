import type { KeyCodec } from '../../core/keys.js'
import type { Message } from '../../core/types.js'
import type { PartitionReader } from '../backend.js'
import { readRecord, recordEnd, utf8 } from '../record-codec.js'
import { isConnectionError, redisError, sleep } from './connection.js'
import type { RedisKeys } from './keys.js'
import type { Scripts } from './scripts.js'

/** Most entries one read script call returns. */
const READ_MAX = 4096
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
 */
export class RedisPartitionReader implements PartitionReader {
  next: number
  private closed = false

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
    let blob: Buffer
    for (let attempt = 1; ; attempt++) {
      try {
        blob = (await this.scripts.runBuffer('read', [this.keys.stream(this.topic, this.partition)], [this.next, Math.min(max, READ_MAX)])) as Buffer
        break
      } catch (e) {
        // Reads are idempotent: ride out a dropped connection (ioredis reconnects) before giving up.
        if (this.closed) return []
        if (!isConnectionError(e) || attempt >= READ_ATTEMPTS) throw redisError(`Read of "${this.topic}" partition ${this.partition} at offset ${this.next} failed`, e)
        await sleep(Math.min(25 * 2 ** attempt, 1000))
      }
    }
    const out: Message[] = []
    decodePacked(blob, this.codec, this.topic, this.partition, out)
    if (out.length > 0) this.next = (out[out.length - 1] as Message).offset + 1
    return out
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
      out.push(readRecord(e.record, 0, recordEnd(e.record, 0), 0, this.codec, this.topic, this.partition, e.offset, e.producerId))
      this.next = e.offset + 1
    }
    return out
  }

  seek(offset: number): void {
    this.next = Math.max(0, offset)
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    this.onClose(this)
  }
}

/** Decode the `read` script's reply (see scripts/read-1.lua) into messages. */
export function decodePacked(b: Buffer, codec: KeyCodec, topic: string, partition: number, out: Message[]): void {
  let p = 0
  let producerId = ''
  const n = b.length
  while (p < n) {
    let offset = 0
    let c = b[p++] as number
    while (c >= 48 && c <= 57) {
      offset = offset * 10 + (c - 48)
      c = b[p++] as number
    }
    if (c === 58) {
      // ':' <length> ':' <producer id>
      let len = 0
      c = b[p++] as number
      while (c >= 48 && c <= 57) {
        len = len * 10 + (c - 48)
        c = b[p++] as number
      }
      producerId = utf8(b, p, p + len)
      p += len
    }
    const end = recordEnd(b, p)
    out.push(readRecord(b, p, end, 0, codec, topic, partition, offset, producerId))
    p = end
  }
}
