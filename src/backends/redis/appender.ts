import { randomBytes } from 'node:crypto'
import { ClosedError, TopicNotFoundError } from '../../core/errors.js'
import { recordBytes, typeBytes, writeRecord } from '../record-codec.js'
import type { RecordInput } from '../record.js'
import { isConnectionError, redisError, sleep } from './connection.js'
import type { RedisKeys } from './keys.js'
import type { Scripts } from './scripts.js'

/** Records per script call: larger appends go as several calls in one pipeline (a few ms of Lua each). */
const PART_RECORDS = 2000
const PART_BYTES = 2 * 1024 * 1024
/** Retries of a part after connection failures, with backoff (about 30 s in all). */
const MAX_ATTEMPTS = 25
/** How long to wait for another instance's multi-part append to finish before giving up. */
const BUSY_WAIT_MS = 15_000

type Part = 'one' | 'first' | 'next' | 'last'

/**
 * Idempotent appends (DESIGN §6). Each store instance has its own producer token; every script call
 * carries the next sequence number of (token, partition). The script records the last applied
 * numbers with their base offsets, so a call re-sent after a dropped connection (by ioredis or by
 * the retry below) returns the offsets it got the first time instead of writing again. Appends to
 * one partition from one instance are serialised, so sequence numbers reach Redis in order.
 */
export class RedisAppender {
  /** Identifies this instance's batches (the clientId alone may be shared by several instances). */
  readonly token: string
  private readonly seqs = new Map<string, number>()
  private readonly tails = new Map<string, Promise<unknown>>()
  private closed = false

  constructor(
    private readonly scripts: Scripts,
    private readonly keys: RedisKeys,
    clientId: string,
  ) {
    this.token = `${clientId.replace(/\s/g, '_')}/${randomBytes(6).toString('hex')}`
  }

  /** Append as one contiguous run of offsets; resolves with the first. */
  append(topic: string, partition: number, records: readonly RecordInput[], producerId: string, maxMessages: number): Promise<number> {
    const id = `${topic}\0${partition}`
    const prev = this.tails.get(id) ?? Promise.resolve()
    const run = prev.then(
      () => this.write(topic, partition, id, records, producerId, maxMessages),
      () => this.write(topic, partition, id, records, producerId, maxMessages),
    )
    const tail = run.catch(() => undefined)
    this.tails.set(id, tail)
    void tail.then(() => {
      if (this.tails.get(id) === tail) this.tails.delete(id)
    })
    return run
  }

  private async write(topic: string, partition: number, id: string, records: readonly RecordInput[], producerId: string, maxMessages: number): Promise<number> {
    if (this.closed) throw new ClosedError(`The Redis backend is closed: cannot append to "${topic}"`)
    if (records.length === 0) throw new Error('append of no records')
    const chunks = encodeParts(records)
    const first = (this.seqs.get(id) ?? 0) + 1
    this.seqs.set(id, first + chunks.length - 1)
    const keys = [this.keys.stream(topic, partition), this.keys.end(topic, partition), this.keys.start(topic, partition), this.keys.producers(topic, partition), this.keys.reservation(topic, partition)]
    const part = (i: number): Part => (chunks.length === 1 ? 'one' : i === 0 ? 'first' : i === chunks.length - 1 ? 'last' : 'next')
    let attempt = 0
    const busySince = Date.now()
    for (;;) {
      try {
        // All parts in one pipeline (ioredis auto-pipelining sends the calls of one tick together).
        const replies = await Promise.all(chunks.map((c, i) => this.scripts.run('append', keys, [this.token, first + i, part(i), maxMessages, producerId, ...c])))
        return Number((replies[0] as [number, number])[0])
      } catch (e) {
        const msg = e instanceof Error ? e.message : String(e)
        if (msg.startsWith('NOTOPIC')) throw new TopicNotFoundError(`Topic "${topic}" (partition ${partition}) does not exist`)
        const busy = msg.startsWith('BUSY') || msg.startsWith('SEQGAP')
        const retry = busy ? Date.now() - busySince < BUSY_WAIT_MS : isConnectionError(e) && attempt < MAX_ATTEMPTS
        if (!retry || this.closed) throw redisError(`Append to "${topic}" partition ${partition} failed`, e)
        attempt++
        await sleep(busy ? 2 : Math.min(20 * 2 ** attempt, 2000))
      }
    }
  }

  /** Refuse further appends (those under way finish). */
  close(): void {
    this.closed = true
  }
}

/** Records encoded into parts of at most PART_RECORDS / PART_BYTES: one buffer per part, one view per record. */
function encodeParts(records: readonly RecordInput[]): Buffer[][] {
  const parts: Buffer[][] = []
  for (let i = 0; i < records.length; ) {
    let size = 0
    let j = i
    const types: Array<Buffer | undefined> = []
    const sizes: number[] = []
    while (j < records.length && j - i < PART_RECORDS && (j === i || size < PART_BYTES)) {
      const r = records[j] as RecordInput
      const t = typeBytes(r)
      const n = recordBytes(r, t)
      types.push(t)
      sizes.push(n)
      size += n
      j++
    }
    const buf = Buffer.allocUnsafe(size)
    const views: Buffer[] = new Array(j - i)
    let pos = 0
    for (let k = 0; k < j - i; k++) {
      const end = writeRecord(buf, pos, records[i + k] as RecordInput, types[k], 0)
      views[k] = buf.subarray(pos, end)
      pos = end
    }
    parts.push(views)
    i = j
  }
  return parts
}
