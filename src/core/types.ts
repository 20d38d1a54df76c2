/** Shared public types of twainmq (see README.md, "API overview"). */
import type { Logger } from './logger.js'

/** A topic's key type: fixed-width unsigned integers, NUL-padded UTF-8 of at most N bytes, or unbounded UTF-8. */
export type KeyType = 'u8' | 'u16' | 'u32' | 'u64' | `char${number}` | 'string'

/** A message key: `bigint` for `u64`, `number` for other integer types, `string` for char/string types. */
export type Key = number | bigint | string

/**
 * The TypeScript type of a topic's keys, from its key type: `KeyOf<'u64'>` is `bigint`,
 * `KeyOf<'u32'>` is `number`, `KeyOf<'string'>` is `string`.
 * @example
 * ```ts
 * const producer = twain.producer<Order, KeyOf<'u32'>>('orders')   // send(key: number, …)
 * ```
 */
export type KeyOf<T extends KeyType> = T extends 'u64' ? bigint : T extends 'u8' | 'u16' | 'u32' ? number : string

/** How much of a topic to keep. All limits apply per partition; whole segments are deleted on the file backend. */
export interface Retention {
  /** Keep at most this many messages per partition. @default unlimited */
  maxMessages?: number
  /** Delete messages older than this many milliseconds. @default unlimited */
  maxAgeMs?: number
  /** Keep at most this many bytes of log per partition. @default unlimited */
  maxBytes?: number
  /** Delete what every consumer group of the topic has committed (a clean-up of consumed messages). @default false */
  consumed?: boolean
}

/** Options of `createTopic`. */
export interface CreateTopicOptions {
  /** Number of partitions, an integer 1..10000. @default 1 */
  partitions?: number
  /**
   * Key type of the topic. **The default is `'u16'` (integers 0..65535)**: pass `'string'` for
   * string keys (user ids, names), `'charN'` for UTF-8 keys of at most N bytes, `'u32'`/`'u64'`
   * for larger integers (`u64` keys are `bigint`).
   * @default 'u16'
   */
  keyType?: KeyType
  /** Names of the message types the topic carries (TwainMQ's `message_types`). @default [] */
  messageTypes?: string[]
  /** Retention limits. @default {} (keep everything) */
  retention?: Retention
  /** Largest message accepted, counting key + headers + encoded value. @default 1048576 (1 MiB) */
  maxMessageBytes?: number
  /**
   * Application attributes stored with the topic and returned by `describeTopic`, fixed at creation
   * (the HTTP gateway keeps a stream's content type and expiry here). Names match
   * `^[A-Za-z0-9_.:-]{1,100}$`; values are strings of at most 4096 bytes; at most 64 of them.
   * Not supported by twainmq-v1 topics.
   * @default {} (none)
   */
  attributes?: Record<string, string>
  /**
   * A compacted topic: the log keeps, for every key, at least its latest record; older records of
   * a key are removed in the background (a pass after a segment fills on a directory, or at once
   * with `twain.compactTopic` / `twainmq topics compact`). Offsets never change, so a compacted
   * topic's offsets may have gaps, which every reader steps over. A `null` value is a tombstone: it
   * marks its key deleted and is itself removed once older than `tombstoneRetentionMs`. Not
   * supported by twainmq-v1 topics.
   * @default false
   * @example
   * ```ts
   * await twain.createTopic('prices', { keyType: 'string', compact: true })
   * ```
   */
  compact?: boolean
  /**
   * How long a tombstone (a `null` value) of a compacted topic is kept at least after it was stored
   * (not after its timestamp, which may be an event time long past), in ms, so readers behind get
   * to see the deletion; only with `compact: true`.
   * @default 86400000 (1 day)
   */
  tombstoneRetentionMs?: number
}

/** What one compaction pass did: records and bytes of the topic before and after it. */
export interface TopicCompaction {
  /** When the pass ended (ms since the epoch). */
  at: number
  before: { records: number; bytes: number }
  after: { records: number; bytes: number }
}

/** What `describeTopic` reports. `end` is the next offset to be written. */
export interface TopicInfo {
  name: string
  partitions: number
  keyType: KeyType
  messageTypes: string[]
  retention: Retention
  maxMessageBytes: number
  /** The attributes given at creation (`{}` when none). */
  attributes: Record<string, string>
  /** Whether the topic is compacted (`CreateTopicOptions.compact`). */
  compact: boolean
  /** A compacted topic's `tombstoneRetentionMs`; absent for others. */
  tombstoneRetentionMs?: number
  /** A compacted topic's last compaction pass; absent when none has run (or the topic is not compacted). */
  lastCompaction?: TopicCompaction
  offsets: Array<{ partition: number; start: number; end: number }>
}

/**
 * A message read from a topic. `K` is the key's type when the reader asserted one
 * (`twain.tail<Order, number>(…)`); it is not checked against the topic's key type.
 */
export interface Message<V = unknown, K extends Key = Key> {
  topic: string
  partition: number
  offset: number
  key: K
  /** Milliseconds since the epoch; may be fractional (Python TwainMQ stores microseconds). */
  timestamp: number
  value: V
  /** The registered message type name, when the value was sent with `{ type }`. */
  type?: string
  headers: Record<string, string>
  /** The `clientId` of the `Twain` that produced the message. */
  producerId: string
  /**
   * Set when the message could not be fully decoded — its registered type's validator rejected the
   * value (`ValidationError`), or its type is unknown to the topic (`UnknownMessageTypeError`). The
   * stream goes on; `value` then holds the value as stored. Absent on healthy messages.
   */
  error?: Error
}

/** Where a partition write landed. */
export interface RecordMetadata {
  partition: number
  offset: number
  /**
   * Set (`true`) on a send with an `id` that the partition had stored within the producer's
   * `dedupWindowMs`: nothing was written, `offset` is the stored message's. Absent otherwise.
   */
  duplicate?: true
}

/** `fsync` policy of the file backend. */
export type FsyncPolicy = 'never' | 'batch' | 'always' | number

/** Options of `open()`. */
export interface OpenOptions {
  /** Redis key prefix; no `{` or `}` (every key's Cluster hash tag is twainmq's: InvalidArgumentError). @default 'twainmq:' */
  prefix?: string
  /**
   * When the file backend forces data to disk. `'never'`: page cache only (survives a process crash,
   * not a power cut); `'batch'`: `fdatasync` after every written batch before the send resolves;
   * `'always'`: like `'batch'`, and also syncs directories when segments and topics are created;
   * a number: a background `fdatasync` of written partitions every that many ms.
   * @default 'never'
   */
  fsync?: FsyncPolicy
  /** Identity of this instance, stored as `producerId` on what it writes. @default `<host>-<pid>-<random>` */
  clientId?: string
  /**
   * Redis only: a send resolves only once this many replicas of the partition's master hold its
   * batch (`WAIT`), so a failover to one of them keeps every acknowledged send. 0: a send resolves
   * when the master has it (a failover can lose the last few). Shared-group members of this
   * instance likewise hand an entry out, and count an acknowledgement done, only once that many
   * replicas hold it (a failover neither delivers it twice nor brings an acknowledged one back).
   * @default 0
   */
  replicaAcks?: number
  /**
   * Redis only: how long a send waits for `replicaAcks` replicas, counted from when the backend
   * takes its batch; when fewer acknowledge it in time it rejects with a retriable `TimeoutError`
   * (the batch may be on the master, not yet safe). The bound holds through a failover: retries
   * after connection failures stop at it, and a master that does not answer is not waited for
   * past it (+0.1 s for the last `WAIT`'s reply).
   * @default 2000
   */
  replicaAckTimeoutMs?: number
  /** On-disk format of the file backend. `'twainmq-v1'` opens a Python TwainMQ root. @default 'native' */
  format?: 'native' | 'twainmq-v1'
  /**
   * OpenTelemetry traces, trace-context propagation and metrics (README, "Observability"), used
   * when the application has `@opentelemetry/api` (an optional peer dependency, loaded by
   * `open()`); `false` turns all of it off. Without the package nothing is recorded or added.
   * @default {} (each part on)
   */
  telemetry?: TelemetryOptions | false
  /**
   * Where to tell what happens in the background (README, "Logging"): any object with
   * `debug/info/warn/error(fields, message)`, such as a pino logger or `console`. It gets members'
   * partitions assigned and revoked (`info`), commits (`debug`), background failures and stalls of
   * consumers and processors (`error`, `warn`; they then no longer print a process warning), log
   * rollbacks a tail or table reads past (`warn`) and background compaction failures (`warn`).
   * @default none (silent, but for the process warnings of failures nobody listens for)
   */
  logger?: Logger
}

/**
 * What `open({ telemetry })` records through `@opentelemetry/api` (README, "Observability").
 * Register the SDK's providers before `open()`, or give them here.
 */
export interface TelemetryOptions {
  /**
   * Spans on the messaging semantic conventions: `send <topic>` (one per batch written to a
   * partition), `process <topic>` (a group's or a processor's message that carries a trace
   * context, from its hand-out to its settlement, with `ack`/`nack`/`term` events; see
   * `rootSpans`) and `commit <topic>` (a processor's exactly-once write of outputs). @default true
   */
  traces?: boolean
  /**
   * Give a `process` span (the root of a trace of its own) also to a message that carries no trace
   * context (sent outside any span). Off, such a message is processed without a span (it is still
   * counted and timed in the metrics): a span per message costs far more than consuming it does.
   * @default false
   */
  rootSpans?: boolean
  /**
   * A send made inside an active span stores that span's W3C trace context in the message's
   * headers `traceparent` (and `tracestate`), which consumers and processors continue. A
   * producer's own `propagate` option overrides it. @default true
   */
  propagate?: boolean
  /**
   * Counters and histograms on the messaging metrics conventions (`messaging.process.duration`
   * only with `processDuration`), and the observable gauges
   * `messaging.consumer.lag` (messages) and `messaging.consumer.lag.age` (seconds) per group and
   * partition consumed here. @default true
   */
  metrics?: boolean
  /**
   * Also record the histogram `messaging.process.duration` (from a message's hand-out to its
   * settlement), for every message. Off by default: one histogram record per message costs the
   * SDK about as much as consuming the message does (`npm run bench -- telemetry`). @default false
   */
  processDuration?: boolean
  /** The tracer provider. @default the global one (`trace.getTracerProvider()`) */
  tracerProvider?: { getTracer(name: string, version?: string): unknown }
  /** The meter provider, read at `open()`. @default the global one (`metrics.getMeterProvider()`) */
  meterProvider?: { getMeter(name: string, version?: string): unknown }
}
