import { BackendError, TopicCorruptError, UnknownMessageTypeError } from '../../core/errors.js'
import { keyCodec } from '../../core/keys.js'
import { checkInt, checkTopicName } from '../../core/names.js'
import type { Message } from '../../core/types.js'
import { ValueKind } from '../../core/values.js'
import type { TopicMeta } from '../../backends/backend.js'
import { NativeStore } from '../../backends/file/native-store.js'
import { WatchHub } from '../../backends/file/watch-hub.js'
import type { RecordInput } from '../../backends/record.js'
import { stringifyJson } from './json64.js'
import { TwainmqStore } from './twainmq-store.js'

/** Options of {@link importTwainmqTopic}. */
export interface ImportOptions {
  /** Name of the topic in the native root. @default the TwainMQ topic's name */
  as?: string
  /** Messages per written batch. @default 1000 */
  batch?: number
  /** Called after every batch with the messages copied so far and the total. */
  onProgress?: (done: number, total: number) => void
}

/** What {@link importTwainmqTopic} copied. */
export interface ImportResult {
  topic: string
  partitions: number
  messages: number
  /** Lines that did not decode, copied as bytes with an `x-twainmq-error` header. */
  corrupt: number
  /** Typed values whose type id is not in the topic's `message_types`, copied as JSON with `x-twainmq-type-id`. */
  unknownTypes: number
  /** Offsets missing in the TwainMQ partition (chunks that start past the previous chunk's end), filled and marked `x-twainmq-missing`. */
  missing: number
}

const PRODUCER_ID = 'twainmq-import'

/**
 * Copy one topic of a Python TwainMQ root into a native root (`nativeRoot`, created if absent),
 * preserving partitions, offsets, timestamps (the same float64 milliseconds a twainmq reader of the
 * TwainMQ topic gets), keys, values with their kind (text, bytes, registered type) and type names.
 * Lines that do not decode keep their offset: they are copied as their raw bytes with an
 * `x-twainmq-error` header. A partition whose first chunk starts past 0 keeps its offsets (the
 * native partition is trimmed to that start).
 */
export async function importTwainmqTopic(
  pythonRoot: string,
  topic: string,
  nativeRoot: string,
  options: ImportOptions = {},
): Promise<ImportResult> {
  const name = checkTopicName(options.as ?? topic)
  const batch = checkInt('batch', options.batch ?? 1000, 1, 1_000_000)
  const hub = new WatchHub()
  const src = new TwainmqStore(pythonRoot, hub)
  const dst = new NativeStore(nativeRoot, hub)
  try {
    const meta = await src.getTopic(topic)
    const offsets = await src.offsets(topic)
    const total = offsets.reduce((n, o) => n + (o.end - o.start), 0)
    const target: TopicMeta = { ...meta, name, retention: {}, createdAt: meta.createdAt }
    await dst.createTopic(target)
    const keys = keyCodec(meta.keyType)
    const result: ImportResult = {
      topic: name,
      partitions: meta.partitions,
      messages: 0,
      corrupt: 0,
      unknownTypes: 0,
      missing: 0,
    }
    let done = 0
    for (const o of offsets) {
      const reader = await src.openReader(topic, o.partition, o.start)
      let next = 0 // next offset of the native partition
      const write = async (records: RecordInput[]) => {
        if (records.length === 0) return
        const base = await dst.append(name, o.partition, records, PRODUCER_ID)
        if (base !== next)
          throw new BackendError(
            `Import of "${topic}" partition ${o.partition}: wrote offset ${base}, expected ${next}`,
          )
        next += records.length
      }
      const fill = async (upTo: number, counted: boolean) => {
        while (next < upTo) {
          const n = Math.min(batch, upTo - next)
          if (counted) result.missing += n
          await write(Array.from({ length: n }, () => placeholder(meta.keyType, counted)))
        }
      }
      try {
        await fill(o.start, false)
        for (;;) {
          const got = await reader.read(batch)
          if (got.length === 0) break
          const records: RecordInput[] = []
          for (const m of got) {
            if (m.offset >= o.end) break
            if (m.offset > next + records.length) {
              await write(records.splice(0))
              await fill(m.offset, true)
            }
            records.push(recordOf(m, keys, result))
            result.messages++
            done++
          }
          await write(records)
          options.onProgress?.(done, total)
          if (next >= o.end) break
        }
      } finally {
        await reader.close()
      }
      if (o.start > 0) await dst.trimBefore(name, o.partition, o.start)
    }
    options.onProgress?.(total, total)
    return result
  } finally {
    hub.close()
    await Promise.all([src.close(), dst.close()])
  }
}

function placeholder(keyType: TopicMeta['keyType'], counted: boolean): RecordInput {
  const width = keyCodec(keyType).width
  const key =
    keyType === 'u8' || keyType === 'u16' || keyType === 'u32'
      ? 0
      : keyType === 'u64'
        ? Buffer.alloc(8)
        : Buffer.alloc(0)
  return {
    key,
    keyBytes: typeof key === 'number' ? width : key.length,
    timestamp: 0,
    kind: ValueKind.Bytes,
    value: Buffer.alloc(0),
    valueBytes: 0,
    headers: counted ? { 'x-twainmq-missing': '1' } : undefined,
  }
}

function recordOf(m: Message, keys: ReturnType<typeof keyCodec>, result: ImportResult): RecordInput {
  const key = keys.recordKey(m.key)
  const r: RecordInput = {
    key,
    keyBytes: typeof key === 'number' ? keys.width : key.length,
    timestamp: m.timestamp,
    kind: ValueKind.Text,
    value: '',
    valueBytes: 0,
  }
  if (m.error instanceof TopicCorruptError) {
    result.corrupt++
    r.kind = ValueKind.Bytes
    r.value = m.value as Buffer
    r.headers = { 'x-twainmq-error': m.error.message }
  } else if (typeof m.value === 'string') {
    r.value = m.value
  } else if (Buffer.isBuffer(m.value)) {
    r.kind = ValueKind.Bytes
    r.value = m.value
  } else {
    r.value = stringifyJson(m.value)
    if (m.type !== undefined) {
      r.kind = ValueKind.Typed
      r.type = m.type
    } else {
      r.kind = ValueKind.Json
      if (m.error instanceof UnknownMessageTypeError) result.unknownTypes++
      const id = (m.error as { typeId?: unknown } | undefined)?.typeId
      if (typeof id === 'number') r.headers = { 'x-twainmq-type-id': String(id) }
    }
  }
  r.valueBytes = typeof r.value === 'string' ? Buffer.byteLength(r.value) : r.value.length
  return r
}
