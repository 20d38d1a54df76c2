import { recordInput, type RecordInput } from '../../backends/record.js'
import { keyCodec } from '../../core/keys.js'
import type { KeyType } from '../../core/types.js'
import { ValueKind } from '../../core/values.js'

/** Message type of the stream's configuration record (offset 0 of a gateway-created topic). */
export const CONFIG_TYPE = 'ds.config'
/** Message type of the close marker: the stream is closed at its offset; nothing after it is served. */
export const CLOSE_TYPE = 'ds.close'
/** Message type of the soft-delete marker: the stream answers 410 while forks still read it. */
export const DELETE_TYPE = 'ds.delete'

/** Header names the gateway writes on the first record of an append (Durable Streams producer / Stream-Seq). */
export const H_PRODUCER = 'ds.producer-id'
export const H_EPOCH = 'ds.producer-epoch'
export const H_SEQ = 'ds.producer-seq'
export const H_STREAM_SEQ = 'ds.stream-seq'
/** On the first record of a JSON append: how many messages the append made (fork sub-offsets count within it). */
export const H_BATCH = 'ds.batch'

/**
 * On a delete of a compacted State Protocol stream (state-records.ts): the event as sent. Its record's
 * value is `null`, a tombstone compaction removes in time; readers are served this text instead.
 */
export const H_EVENT = 'ds.event'

/** Whether a message is one of the gateway's control records (never served to HTTP readers). */
export const isControl = (type: string | undefined): boolean => type !== undefined && type.startsWith('ds.')

/** The key type of the topics the gateway creates: every record has key 0 (a stream has no keys). */
export const GATEWAY_KEY_TYPE: KeyType = 'u16'
/** The key type of a compacted stream's topic: each record's compaction key. */
export const COMPACTED_KEY_TYPE: KeyType = 'string'
const KEYS = keyCodec(GATEWAY_KEY_TYPE)
const COMPACTED_KEYS = keyCodec(COMPACTED_KEY_TYPE)

/** A record for partition 0 of a gateway topic: key 0, or `key` on a compacted stream's topic. */
export function record(
  kind: ValueKind,
  value: Buffer | string,
  type?: string,
  headers?: Record<string, string>,
  key?: string,
): RecordInput {
  return key === undefined
    ? recordInput(KEYS, 0, kind, value, { type, headers })
    : recordInput(COMPACTED_KEYS, key, kind, value, { type, headers })
}

/** A control record (typed, JSON value). */
export const controlRecord = (type: string, value: unknown, headers?: Record<string, string>): RecordInput =>
  record(ValueKind.Typed, JSON.stringify(value ?? null), type, headers)
