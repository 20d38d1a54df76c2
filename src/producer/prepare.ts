import type { TopicMeta } from '../backends/backend.js'
import { headerBytes, type RecordInput } from '../backends/record.js'
import { InvalidArgumentError, MessageTooLargeError, UnknownMessageTypeError } from '../core/errors.js'
import type { Partitioner } from '../core/hash64.js'
import { keyCodec, type KeyCodec } from '../core/keys.js'
import type { TypeRegistry } from '../core/message-types.js'
import type { Key, RecordMetadata } from '../core/types.js'
import { ValueKind, encodeValue } from '../core/values.js'

/** One message to send, as given by the user. */
export interface SendItem {
  key: Key
  value: unknown
  headers?: Record<string, string> | undefined
  type?: string | undefined
  partition?: number | undefined
}

function checkHeaders(headers: unknown): Record<string, string> | undefined {
  if (headers === undefined) return undefined
  if (headers === null || typeof headers !== 'object' || Array.isArray(headers)) {
    throw new InvalidArgumentError(`headers must be an object of string values, got ${JSON.stringify(headers)}`)
  }
  let n = 0
  for (const [k, v] of Object.entries(headers)) {
    if (typeof v !== 'string') throw new InvalidArgumentError(`Header "${k}" must be a string, got ${typeof v}`)
    const nameBytes = Buffer.byteLength(k)
    if (nameBytes > 65535) throw new InvalidArgumentError(`Header name "${k.slice(0, 40)}…" is ${nameBytes} UTF-8 bytes; at most 65535 are allowed`)
    n++
  }
  if (n > 65535) throw new InvalidArgumentError(`A message may carry at most 65535 headers, got ${n}`)
  return n === 0 ? undefined : (headers as Record<string, string>)
}

/** A checked record with its partition; `offset` is filled in once written. */
export interface PreparedRecord extends RecordInput {
  partition: number
  offset: number
}

const captured = {
  resolve: undefined as unknown as (m: RecordMetadata) => void,
  reject: undefined as unknown as (error: unknown) => void,
}
function capture(resolve: (m: RecordMetadata) => void, reject: (error: unknown) => void): void {
  captured.resolve = resolve
  captured.reject = reject
}

/**
 * A single `send()` in flight: its input, its promise, and — once prepared — the record itself, so
 * a send costs one object. Until preparation `key`, `value`, `headers`, `type` and `partition` hold
 * the caller's input (it is its own `SendItem`); `finish` reads each input before it writes the
 * encoded field over it.
 */
export class SendRecord implements PreparedRecord {
  key: Buffer | number
  keyBytes = 0
  timestamp = 0
  kind: ValueKind = ValueKind.Text
  value: Buffer | string
  valueBytes = 0
  type: string | undefined
  headers: Record<string, string> | undefined
  partition: number
  offset = -1
  /** Settle the `send()` promise (captured from its executor). */
  readonly resolve: (m: RecordMetadata) => void
  readonly reject: (error: unknown) => void
  /** The `send()` promise. */
  readonly promise: Promise<RecordMetadata>
  constructor(
    key: Key,
    value: unknown,
    options: { headers?: Record<string, string> | undefined; type?: string | undefined; partition?: number | undefined } | undefined,
  ) {
    this.key = key as Buffer | number
    this.value = value as Buffer | string
    this.headers = options?.headers
    this.type = options?.type
    this.partition = options?.partition as number // undefined until prepared when not pinned
    // A static executor captures the resolving functions: no closure per send.
    this.promise = new Promise(capture)
    this.resolve = captured.resolve
    this.reject = captured.reject
  }

  /** The input, viewed as what `prepareRecord` reads (valid until preparation). */
  get input(): SendItem {
    return this as unknown as SendItem
  }
}

function finish(meta: TopicMeta, item: SendItem, partitioner: Partitioner, value: unknown, now: number, target?: SendRecord): PreparedRecord {
  const codec = codecOf(meta)
  // `item` may be the `target` itself (a SendRecord): read every input before writing outputs.
  const rawKey = item.key
  const pinned = item.partition
  const key = codec.recordKey(rawKey)
  const keyBytes = typeof key === 'number' ? codec.width : key.length
  if (keyBytes > 65535) throw new InvalidArgumentError(`Key is ${keyBytes} bytes; at most 65535 are allowed`)
  const headers = item.headers === undefined ? undefined : checkHeaders(item.headers)
  let kind: ValueKind
  let bytes: Buffer | string
  let length: number
  if (typeof value === 'string' && item.type === undefined) {
    kind = ValueKind.Text
    bytes = value
    length = -1
  } else {
    const v = encodeValue(value, item.type !== undefined)
    kind = v.kind
    bytes = v.bytes
    length = v.length
  }
  let record: PreparedRecord
  if (target) {
    record = target
    target.key = key
    target.keyBytes = keyBytes
    target.timestamp = now
    target.kind = kind
    target.value = bytes
    target.valueBytes = length
    target.type = item.type
    target.headers = headers
  } else record = { key, keyBytes, timestamp: now, kind, value: bytes, valueBytes: length, type: item.type, headers, partition: 0, offset: -1 }
  // A string's UTF-8 length is measured here only when its bound (3 bytes per UTF-16 unit) could
  // break the limit; otherwise the encoder learns it as it writes the string.
  const hb = headers === undefined ? 0 : headerBytes(headers)
  if (length < 0 && keyBytes + hb + (bytes as string).length * 3 > meta.maxMessageBytes) record.valueBytes = length = Buffer.byteLength(bytes as string, 'utf8')
  if (length >= 0 && keyBytes + hb + length > meta.maxMessageBytes) {
    throw new MessageTooLargeError(
      `Message of ${keyBytes + hb + length} bytes (key ${keyBytes} + headers ${hb} + value ${length}) is larger than maxMessageBytes ${meta.maxMessageBytes} of topic "${meta.name}"`,
    )
  }
  let partition: number
  if (pinned !== undefined) {
    partition = pinned
    if (!Number.isInteger(partition) || partition < 0 || partition >= meta.partitions) {
      throw new InvalidArgumentError(`Partition ${String(partition)} does not exist in topic "${meta.name}" (partitions 0..${meta.partitions - 1})`)
    }
  } else if (meta.partitions === 1) partition = 0
  else {
    partition = partitioner(codec.normalise(rawKey), meta.partitions)
    if (!Number.isInteger(partition) || partition < 0 || partition >= meta.partitions) {
      throw new InvalidArgumentError(`The partitioner returned ${String(partition)} for topic "${meta.name}" with ${meta.partitions} partitions`)
    }
  }
  record.partition = partition
  return record
}

const codecs = new WeakMap<TopicMeta, KeyCodec>()
/** The key codec of a topic, looked up once per topic configuration rather than once per record. */
function codecOf(meta: TopicMeta): KeyCodec {
  let c = codecs.get(meta)
  if (!c) codecs.set(meta, (c = keyCodec(meta.keyType)))
  return c
}

/**
 * Check and encode one message against its topic: key type, headers, registered type, size and
 * partition. Synchronous unless the value has a type whose validator is asynchronous.
 */
export function prepareRecord(
  meta: TopicMeta,
  item: SendItem,
  partitioner: Partitioner,
  types: TypeRegistry,
  now: number,
  target?: SendRecord,
): PreparedRecord | Promise<PreparedRecord> {
  if (item === null || typeof item !== 'object') throw new InvalidArgumentError(`A message must be { key, value }, got ${String(item)}`)
  if (item.type === undefined) return finish(meta, item, partitioner, item.value, now, target)
  const type = item.type
  if (meta.messageTypes.length > 0 && !meta.messageTypes.includes(type)) {
    throw new UnknownMessageTypeError(`Message type "${type}" is not one of topic "${meta.name}"'s types: ${meta.messageTypes.join(', ')}`)
  }
  return types.validate(type, item.value, `sending to topic "${meta.name}"`).then((v) => finish(meta, item, partitioner, v, now, target))
}
