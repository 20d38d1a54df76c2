import type { TopicMeta } from '../backends/backend.js'
import { headerBound, headerBytes, ID_HEADER, keyBytesOf, MAX_ID_BYTES, UNMEASURED } from '../backends/record.js'
import { InvalidArgumentError, MessageTooLargeError, UnknownMessageTypeError } from '../core/errors.js'
import { checkTime } from '../core/event-time.js'
import type { Partitioner } from '../core/hash64.js'
import { keyCodec, type KeyCodec } from '../core/keys.js'
import type { TypeRegistry } from '../core/message-types.js'
import { ValueKind, encodeValue } from '../core/values.js'
import type { InPlaceRecord, PreparedRecord, SendItem, SendRecord } from './send-record.js'

function checkHeaders(headers: unknown): Record<string, string> | undefined {
  if (headers === null || typeof headers !== 'object' || Array.isArray(headers)) {
    throw new InvalidArgumentError(`headers must be an object of string values, got ${JSON.stringify(headers)}`)
  }
  let n = 0
  for (const [k, v] of Object.entries(headers)) {
    if (typeof v !== 'string') throw new InvalidArgumentError(`Header "${k}" must be a string, got ${typeof v}`)
    const nameBytes = Buffer.byteLength(k)
    if (nameBytes > 65535)
      throw new InvalidArgumentError(
        `Header name "${k.slice(0, 40)}…" is ${nameBytes} UTF-8 bytes; at most 65535 are allowed`,
      )
    n++
  }
  if (n > 65535) throw new InvalidArgumentError(`A message may carry at most 65535 headers, got ${n}`)
  return n === 0 ? undefined : (headers as Record<string, string>)
}

/** An idempotency id checked (a non-empty string of at most `MAX_ID_BYTES`); returns its UTF-8 length. */
function checkId(id: unknown): number {
  if (typeof id !== 'string' || id.length === 0)
    throw new InvalidArgumentError(`A send's id must be a non-empty string, got ${JSON.stringify(id) ?? String(id)}`)
  const bytes = utf8Length(id)
  if (bytes > MAX_ID_BYTES)
    throw new InvalidArgumentError(
      `A send's id must be at most ${MAX_ID_BYTES} UTF-8 bytes, got ${bytes} ("${id.slice(0, 40)}…")`,
    )
  return bytes
}

/** UTF-8 length of a string: counted in a loop while it is short and ASCII (most ids are), else by Buffer. */
function utf8Length(s: string): number {
  if (s.length > 64) return Buffer.byteLength(s, 'utf8')
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) >= 0x80) return Buffer.byteLength(s, 'utf8')
  return s.length
}

/** Stored bytes of the id header (name, value and their lengths) of an id of `idBytes` UTF-8 bytes. */
const ID_HEADER_FIXED = 6 + Buffer.byteLength(ID_HEADER, 'utf8')

/** The headers of a send with an idempotency id: `headers` plus `ID_HEADER` (checked). */
function withId(id: unknown, headers: Record<string, string> | undefined): Record<string, string> {
  checkId(id)
  const given = headers?.[ID_HEADER]
  if (given !== undefined && given !== id)
    throw new InvalidArgumentError(
      `A send's id "${id}" and its header ${ID_HEADER} "${given}" differ: give one (the id is stored in that header)`,
    )
  return { ...headers, [ID_HEADER]: id as string }
}

/**
 * How a flush validates a typed value: the instance's `TypeRegistry`, or (for dead letters) a
 * check that keeps the value as it was read.
 */
export type TypeCheck = Pick<TypeRegistry, 'validate'>

function tooLarge(meta: TopicMeta, keyBytes: number, hb: number, length: number): MessageTooLargeError {
  return new MessageTooLargeError(
    `Message of ${keyBytes + hb + length} bytes (key ${keyBytes} + headers ${hb} + value ${length}) is larger than maxMessageBytes ${meta.maxMessageBytes} of topic "${meta.name}"`,
    { size: keyBytes + hb + length, limit: meta.maxMessageBytes },
  )
}

const codecs = new WeakMap<TopicMeta, KeyCodec>()
/** The key codec of a topic, made once per topic configuration. */
function codecOf(meta: TopicMeta): KeyCodec {
  let c = codecs.get(meta)
  if (!c) codecs.set(meta, (c = keyCodec(meta.keyType)))
  return c
}

/**
 * Checks and encodes the messages of one flush against their topic: key type, headers, registered
 * type, size and partition. One per flush, so the topic's codec, limits and clock are read once.
 * Synchronous unless a value has a type whose validator is asynchronous.
 */
export class Preparer {
  private readonly codec: KeyCodec

  constructor(
    private readonly meta: TopicMeta,
    private readonly partitioner: Partitioner,
    private readonly types: TypeCheck,
    /** The timestamp of every record of the flush that was not given one (`SendOptions.timestamp`). */
    readonly now: number,
  ) {
    this.codec = codecOf(meta)
  }

  /** A `sendBatch` item, prepared into a new record. */
  item(item: SendItem): PreparedRecord | Promise<PreparedRecord> {
    if (item === null || typeof item !== 'object')
      throw new InvalidArgumentError(`A message must be { key, value }, got ${String(item)}`)
    if (item.type === undefined) return this.finish(item, item.value, undefined)
    return this.typed(item.type, item).then((v) => this.finish(item, v, undefined))
  }

  /** A single send (or a processor's output), prepared in place (it is its own input). */
  send(r: InPlaceRecord): PreparedRecord | Promise<PreparedRecord> {
    const item = r as unknown as SendItem
    if (item.type === undefined) return this.finish(item, item.value, r)
    return this.typed(item.type, item).then((v) => this.finish(item, v, r))
  }

  private typed(type: string, item: SendItem): Promise<unknown> {
    const meta = this.meta
    if (meta.messageTypes.length > 0 && !meta.messageTypes.includes(type)) {
      throw new UnknownMessageTypeError(
        `Message type "${type}" is not one of topic "${meta.name}"'s types: ${meta.messageTypes.join(', ')}`,
      )
    }
    return this.types.validate(type, item.value, `sending to topic "${meta.name}"`)
  }

  private finish(item: SendItem, value: unknown, target: InPlaceRecord | undefined): PreparedRecord {
    const meta = this.meta
    const codec = this.codec
    // `item` may be the `target` itself (an InPlaceRecord): read every input before writing outputs.
    const rawKey = item.key
    const pinned = item.partition
    const type = item.type
    const at = target === undefined ? item.timestamp : target.eventTime
    const timestamp = at === undefined ? this.now : checkTime('send() option timestamp', at)
    const key = codec.recordKey(rawKey)
    const keyBytes = keyBytesOf(key, codec)
    let headers = item.headers === undefined ? undefined : checkHeaders(item.headers)
    // An id given as `id` or as the header itself (the header alone is an id too).
    const id = item.id ?? headers?.[ID_HEADER]
    if (id !== undefined) {
      // A directory store judges a stored id's age by its record's timestamp (id-table.ts): an
      // event time there would put it outside the window, and a retry would be stored again.
      if (at !== undefined)
        throw new InvalidArgumentError(
          `A send with an id (${JSON.stringify(id)}) cannot give its own timestamp (${at instanceof Date ? at.toISOString() : String(at)}): ids are remembered by the time their message is stored; send one or the other`,
        )
      headers = withId(id, headers)
    }
    let kind: ValueKind
    let bytes: Buffer | string
    let length: number
    if (typeof value === 'string' && type === undefined) {
      kind = ValueKind.Text
      bytes = value
      length = UNMEASURED // measured by the encoder as it writes (see RecordInput.valueBytes)
    } else {
      const v = encodeValue(value, type !== undefined)
      kind = v.kind
      bytes = v.bytes
      length = v.length
    }
    // Headers are measured only when their bound could take the record past the limit.
    const hbound = headers === undefined ? 0 : headerBound(headers)
    if (length < 0) {
      if (keyBytes + hbound + (bytes as string).length * 3 > meta.maxMessageBytes) {
        const hb = headers === undefined ? 0 : headerBytes(headers)
        length = this.checkText(keyBytes + hb, bytes as string, hb)
      }
    } else if (keyBytes + hbound + length > meta.maxMessageBytes) {
      const hb = headers === undefined ? 0 : headerBytes(headers)
      if (keyBytes + hb + length > meta.maxMessageBytes) throw tooLarge(meta, keyBytes, hb, length)
    }
    const partition = this.partitionOf(rawKey, pinned)
    if (target === undefined)
      return {
        key,
        keyBytes,
        timestamp,
        kind,
        value: bytes,
        valueBytes: length,
        type,
        headers,
        partition,
        offset: -1,
      }
    target.key = key
    target.keyBytes = keyBytes
    target.timestamp = timestamp
    target.kind = kind
    target.value = bytes
    target.valueBytes = length
    target.headers = headers
    target.partition = partition
    return target
  }

  /**
   * A plain text send (string value, no type, no headers but an idempotency id; see `TextFlusher`),
   * checked as `send` checks it and prepared in place only as far as a frame needs: its key encoded (`key`,
   * `keyBytes`) and its partition chosen.
   */
  text(r: SendRecord): void {
    const rawKey = r.key as unknown
    const key = this.codec.recordKey(rawKey)
    const keyBytes = keyBytesOf(key, this.codec)
    const hb = r.id === undefined ? 0 : ID_HEADER_FIXED + checkId(r.id)
    this.checkText(keyBytes + hb, r.value as string, hb)
    r.partition = this.partitionOf(rawKey, r.partition as number | undefined)
    r.key = key
    r.keyBytes = keyBytes
  }

  /** The encoded key of the last `textItem`, and its length in bytes. */
  key: Buffer | number = 0
  keyBytes = 0

  /**
   * A plain text `sendBatch` item (see `isPlainText`), checked as `item` checks it, without a
   * record made for it: its encoded key is left in `key` and `keyBytes`; returns its partition.
   */
  textItem(item: SendItem): number {
    const rawKey = item.key
    const key = this.codec.recordKey(rawKey)
    const keyBytes = keyBytesOf(key, this.codec)
    this.checkText(keyBytes, item.value as string, 0)
    const partition = this.partitionOf(rawKey, item.partition)
    this.key = key
    this.keyBytes = keyBytes
    return partition
  }

  /**
   * `maxMessageBytes` against a text value and `fixed` other bytes (`headerBytes` of them headers):
   * the UTF-8 length is measured only when the bound (3 bytes per UTF-16 unit) could break it.
   * Returns the length measured, or -1 (see `RecordInput.valueBytes`).
   */
  private checkText(fixed: number, value: string, headerBytes: number): number {
    const max = this.meta.maxMessageBytes
    if (fixed + value.length * 3 <= max) return -1
    const length = Buffer.byteLength(value, 'utf8')
    if (fixed + length > max) throw tooLarge(this.meta, fixed - headerBytes, headerBytes, length)
    return length
  }

  private partitionOf(rawKey: unknown, pinned: number | undefined): number {
    const meta = this.meta
    if (pinned !== undefined) {
      if (!Number.isInteger(pinned) || pinned < 0 || pinned >= meta.partitions) {
        throw new InvalidArgumentError(
          `Partition ${String(pinned)} does not exist in topic "${meta.name}" (partitions 0..${meta.partitions - 1})`,
        )
      }
      return pinned
    }
    if (meta.partitions === 1) return 0
    const partition = this.partitioner(this.codec.normalise(rawKey), meta.partitions)
    if (!Number.isInteger(partition) || partition < 0 || partition >= meta.partitions) {
      throw new InvalidArgumentError(
        `The partitioner returned ${String(partition)} for topic "${meta.name}" with ${meta.partitions} partitions`,
      )
    }
    return partition
  }
}
