import type { CompactionStats, TopicMeta } from '../backends/backend.js'
import { InvalidArgumentError } from '../core/errors.js'
import { keyCodec } from '../core/keys.js'
import { checkInt, checkKnownKeys, checkNonNegative, checkTopicName } from '../core/names.js'
import type { CreateTopicOptions, Retention, TopicInfo } from '../core/types.js'

const RETENTION_KEYS = new Set(['maxMessages', 'maxAgeMs', 'maxBytes', 'consumed'])

/** Validate retention limits; throws `InvalidArgumentError` naming the bad field. */
export function checkRetention(r: unknown): Retention {
  if (r === undefined) return {}
  if (r === null || typeof r !== 'object' || Array.isArray(r))
    throw new InvalidArgumentError(`retention must be an object, got ${JSON.stringify(r)}`)
  const out: Retention = {}
  for (const [k, v] of Object.entries(r)) {
    if (!RETENTION_KEYS.has(k))
      throw new InvalidArgumentError(`Unknown retention option "${k}": use maxMessages, maxAgeMs, maxBytes or consumed`)
    if (v === undefined) continue
    if (k === 'consumed') {
      if (typeof v !== 'boolean')
        throw new InvalidArgumentError(`retention.consumed must be a boolean, got ${JSON.stringify(v)}`)
      out.consumed = v
    } else if (k === 'maxMessages') out.maxMessages = checkInt('retention.maxMessages', v, 1, Number.MAX_SAFE_INTEGER)
    else if (k === 'maxBytes') out.maxBytes = checkInt('retention.maxBytes', v, 1, Number.MAX_SAFE_INTEGER)
    else out.maxAgeMs = checkNonNegative('retention.maxAgeMs', v)
  }
  return out
}

/** The options of `createTopic`, in the order `ensureTopic` reports differences in them. */
export const TOPIC_OPTIONS = [
  'partitions',
  'keyType',
  'messageTypes',
  'retention',
  'maxMessageBytes',
  'attributes',
  'compact',
  'tombstoneRetentionMs',
] as const

/** Turn `createTopic` arguments into a checked `TopicMeta`. */
export function topicMetaFrom(name: unknown, options: CreateTopicOptions = {}): TopicMeta {
  const topic = checkTopicName(name)
  if (options === null || typeof options !== 'object')
    throw new InvalidArgumentError(`createTopic options must be an object, got ${JSON.stringify(options)}`)
  checkKnownKeys('createTopic', options, TOPIC_OPTIONS)
  const partitions = checkInt('partitions', options.partitions ?? 1, 1, 10_000)
  const keyType = keyCodec(options.keyType ?? 'u16').type
  const messageTypes = options.messageTypes ?? []
  if (!Array.isArray(messageTypes) || messageTypes.some((t) => typeof t !== 'string' || t === '')) {
    throw new InvalidArgumentError(`messageTypes must be an array of type names, got ${JSON.stringify(messageTypes)}`)
  }
  if (new Set(messageTypes).size !== messageTypes.length)
    throw new InvalidArgumentError(`messageTypes has duplicates: ${JSON.stringify(messageTypes)}`)
  const maxMessageBytes = checkInt('maxMessageBytes', options.maxMessageBytes ?? 1024 * 1024, 1, 256 * 1024 * 1024)
  const attributes = checkAttributes(options.attributes)
  const meta: TopicMeta = {
    name: topic,
    partitions,
    keyType,
    messageTypes: [...messageTypes],
    retention: checkRetention(options.retention),
    maxMessageBytes,
    createdAt: Date.now(),
  }
  if (attributes) meta.attributes = attributes
  Object.assign(meta, checkCompaction(options))
  return meta
}

/** A day: how long a tombstone of a compacted topic is kept unless `tombstoneRetentionMs` says otherwise. */
export const DEFAULT_TOMBSTONE_RETENTION_MS = 86_400_000

/**
 * Validate `createTopic({ compact, tombstoneRetentionMs })`: the stored fields (both only for a
 * compacted topic, the retention with its default). Throws `InvalidArgumentError` naming the option.
 */
export function checkCompaction(
  options: Pick<CreateTopicOptions, 'compact' | 'tombstoneRetentionMs'>,
): Pick<TopicMeta, 'compact' | 'tombstoneRetentionMs'> {
  const { compact, tombstoneRetentionMs } = options
  if (compact !== undefined && typeof compact !== 'boolean')
    throw new InvalidArgumentError(`compact must be a boolean, got ${JSON.stringify(compact)}`)
  if (compact !== true) {
    if (tombstoneRetentionMs !== undefined)
      throw new InvalidArgumentError(
        `tombstoneRetentionMs (${JSON.stringify(tombstoneRetentionMs)}) applies only to a compacted topic: pass compact: true`,
      )
    return {}
  }
  return {
    compact: true,
    tombstoneRetentionMs: checkInt(
      'tombstoneRetentionMs',
      tombstoneRetentionMs ?? DEFAULT_TOMBSTONE_RETENTION_MS,
      0,
      Number.MAX_SAFE_INTEGER,
    ),
  }
}

const ATTRIBUTE_NAME = /^[A-Za-z0-9_.:-]{1,100}$/
/** Most attributes a topic may have. */
const MAX_ATTRIBUTES = 64
/** Longest attribute value, in UTF-8 bytes. */
const MAX_ATTRIBUTE_BYTES = 4096

/** Validate `createTopic({ attributes })`; undefined when there are none. Throws `InvalidArgumentError` naming the bad entry. */
export function checkAttributes(a: unknown): Record<string, string> | undefined {
  if (a === undefined) return undefined
  if (a === null || typeof a !== 'object' || Array.isArray(a))
    throw new InvalidArgumentError(`attributes must be an object of strings, got ${JSON.stringify(a)}`)
  const entries = Object.entries(a)
  if (entries.length > MAX_ATTRIBUTES)
    throw new InvalidArgumentError(`attributes has ${entries.length} entries; at most ${MAX_ATTRIBUTES}`)
  const out: Record<string, string> = {}
  for (const [k, v] of entries) {
    if (!ATTRIBUTE_NAME.test(k))
      throw new InvalidArgumentError(
        `Attribute name ${JSON.stringify(k)} is invalid: use 1..100 of A-Z a-z 0-9 _ . : -`,
      )
    if (typeof v !== 'string')
      throw new InvalidArgumentError(`Attribute "${k}" must be a string, got ${JSON.stringify(v) ?? typeof v}`)
    if (Buffer.byteLength(v) > MAX_ATTRIBUTE_BYTES)
      throw new InvalidArgumentError(
        `Attribute "${k}" is ${Buffer.byteLength(v)} bytes; at most ${MAX_ATTRIBUTE_BYTES}`,
      )
    out[k] = v
  }
  return entries.length === 0 ? undefined : out
}

/** What `describeTopic` adds for a compacted topic: its tombstone retention and last pass (when one ran). */
export function compactionInfo(
  tombstoneRetentionMs: number | undefined,
  last: CompactionStats | undefined,
): Pick<TopicInfo, 'tombstoneRetentionMs' | 'lastCompaction'> {
  return {
    tombstoneRetentionMs: tombstoneRetentionMs ?? DEFAULT_TOMBSTONE_RETENTION_MS,
    ...(last === undefined
      ? {}
      : { lastCompaction: { at: last.at, before: { ...last.before }, after: { ...last.after } } }),
  }
}
