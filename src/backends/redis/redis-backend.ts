import type { BackgroundFailure } from '../../core/logger.js'
import { InvalidArgumentError, TopicNotFoundError } from '../../core/errors.js'
import { keyCodec } from '../../core/keys.js'
import { closedError, closedGuard } from '../closed-guard.js'
import type {
  AppendOptions,
  Backend,
  CompactionStats,
  IdempotentResult,
  OutputSource,
  SourcePosition,
  PartitionOffsets,
  PartitionReader,
  TopicMeta,
} from '../backend.js'
import type { GroupAdmin } from '../group-admin.js'
import { trimConsumed } from '../trim-consumed.js'
import { checkIdempotent, type RecordInput } from '../record.js'
import { checkSourced } from '../source-table.js'
import { RedisAppender } from './appender.js'
import { RedisCompaction } from './compaction.js'
import { redisError, type Client, type RedisTarget } from './connection.js'
import { RedisGroupAdmin } from './redis-group-admin.js'
import { openClient, openWriter } from './open-client.js'
import { ReplicaAcks } from './replica-acks.js'
import { GroupNotifier } from './group-notify.js'
import { RedisGroupStore } from './group-store.js'
import { RedisKeys } from './keys.js'
import { RedisPartitionReader } from './reader.js'
import { RedisRetention } from './retention.js'
import { Scripts } from './scripts.js'
import { DeliveryConfirm } from './shared/shared-confirm.js'
import { RedisSharedGroups } from './shared/shared-group.js'
import { RedisTopics } from './topics.js'
import { RedisWatchers } from './watcher.js'

/** Options of the Redis backend. */
export interface RedisBackendOptions {
  /** Key prefix of everything twainmq stores. @default 'twainmq:' */
  prefix?: string
  /** The owning instance's clientId (its appends' idempotency token starts with it). */
  clientId: string
  /** A send resolves once this many replicas hold its batch (`WAIT`); shared members hand entries out and finish acknowledgements once they hold them. @default 0 */
  replicaAcks?: number
  /** How long a send waits for `replicaAcks` replicas, from when its append is taken, before it rejects with a `TimeoutError` (failovers included). @default 2000 */
  replicaAckTimeoutMs?: number
  /** How often this process compacts, in the background, the compacted topics it appends to or reads. @default 30000 */
  compactEveryMs?: number
  /** Entries one compaction script call looks at (each call is atomic; at most 2000). @default 500 */
  compactStep?: number
  /** Told of background work that failed (a compaction pass; the next period tries again). @default none */
  onBackgroundFailure?: BackgroundFailure
}

/** How often (per topic) appends apply `maxAgeMs` / `maxBytes` retention. */
const RETENTION_EVERY_MS = 1000

/** `partition` is one of `meta`'s. @throws InvalidArgumentError naming it and the topic's range. */
function checkPartition(meta: TopicMeta, topic: string, partition: number): void {
  if (!Number.isInteger(partition) || partition < 0 || partition >= meta.partitions)
    throw new InvalidArgumentError(
      `Partition ${partition} does not exist in topic "${topic}" (partitions 0..${meta.partitions - 1})`,
    )
}

/**
 * The Redis backend: topics, dense offsets and partitioned groups on Redis Streams,
 * behind the same `Backend` contract as the file backend. See docs/format.md ("Redis layout").
 */
export class RedisBackend implements Backend {
  readonly kind = 'redis' as const
  readonly groups: RedisGroupStore
  /** Group administration over both modes (group-admin.ts). */
  readonly admin: GroupAdmin
  /** Shared groups (`mode: 'shared'`): Redis consumer groups on the partition streams (shared-group.ts). */
  readonly shared: RedisSharedGroups
  /** @internal Key layout (for the shared-group source). */
  readonly keys: RedisKeys
  /** @internal The backend's scripts on the command client. */
  readonly scripts: Scripts
  private readonly topics: RedisTopics
  private readonly appender: RedisAppender
  private readonly watchers: RedisWatchers
  private readonly retention: RedisRetention
  private readonly compaction: RedisCompaction
  private readonly notifier: GroupNotifier
  private readonly readers = new Set<RedisPartitionReader>()
  private readonly retainedAt = new Map<string, number>()
  /** Per topic: resolves once a tail's end-offset reads are issued (appends wait for it). */
  private readonly snapshotGates = new Map<string, Promise<void>>()
  private closing: Promise<void> | undefined

  private constructor(
    /** @internal The shared command client (blocking reads use `createDedicated(client, …)`). */
    readonly client: Client,
    options: RedisBackendOptions,
    /** The appends' own client when they wait for replicas (`replicaAcks`). */
    private readonly writer?: Client,
  ) {
    this.keys = new RedisKeys(options.prefix ?? 'twainmq:')
    this.scripts = new Scripts(client)
    const policy = options.replicaAcks
      ? { replicas: options.replicaAcks, timeoutMs: options.replicaAckTimeoutMs ?? 2000 }
      : undefined
    const acks = writer && policy && new ReplicaAcks(writer, policy)
    this.topics = new RedisTopics(client, this.scripts, this.keys, acks)
    this.appender = new RedisAppender(writer ? new Scripts(writer) : this.scripts, this.keys, options.clientId, acks)
    this.watchers = new RedisWatchers(client, this.keys)
    this.retention = new RedisRetention(client, this.scripts, this.keys)
    this.notifier = new GroupNotifier(client)
    this.compaction = new RedisCompaction(
      client,
      this.scripts,
      this.keys,
      (t) => this.topics.get(t),
      options.compactEveryMs,
      options.compactStep,
      options.onBackgroundFailure,
    )
    const confirm = policy && new DeliveryConfirm(client, policy)
    this.shared = new RedisSharedGroups(client, this.scripts, this.keys, (t) => this.topics.get(t), confirm)
    const groups = new RedisGroupStore(
      client,
      this.scripts,
      this.keys,
      this.notifier,
      async (t) => {
        try {
          return (await this.topics.cached(t)).partitions
        } catch (e) {
          if (e instanceof TopicNotFoundError) return 0
          throw e
        }
      },
      confirm,
    )
    this.groups = closedGuard(groups, () => this.closing !== undefined, 'redis', ['watchGroup'])
    this.admin = closedGuard(new RedisGroupAdmin(groups, this.shared), () => this.closing !== undefined, 'redis')
  }

  /** Connect to a Redis (or Cluster); `ConnectionError` when it cannot be reached. */
  static async connect(target: RedisTarget, options: RedisBackendOptions): Promise<RedisBackend> {
    const client = await openClient(target, options.prefix ?? 'twainmq:')
    const writer = options.replicaAcks ? await openWriter(client, target) : undefined
    return new RedisBackend(client, options, writer)
  }

  /** `ClosedError` once `close()` was called (ioredis would say "Connection is closed", retriable). */
  private live(what: string): void {
    if (this.closing) throw closedError('redis', what)
  }

  async createTopic(meta: TopicMeta): Promise<void> {
    this.live(`create topic "${meta.name}"`)
    return this.topics.create(meta)
  }

  async deleteTopic(name: string): Promise<void> {
    this.live(`delete topic "${name}"`)
    await this.topics.delete(name)
    this.appender.forget(name) // a topic created again is a new log, not a rollback
  }

  async listTopics(): Promise<string[]> {
    this.live('list topics')
    return this.topics.list()
  }

  async getTopic(name: string): Promise<TopicMeta> {
    this.live(`use topic "${name}"`)
    return this.topics.get(name)
  }

  async markAccess(topic: string, at: number): Promise<void> {
    this.live(`note an access of "${topic}"`)
    return this.topics.markAccess(topic, at)
  }

  async lastAccess(topic: string): Promise<number | undefined> {
    this.live(`read the last access of "${topic}"`)
    return this.topics.lastAccess(topic)
  }

  async offsets(topic: string): Promise<PartitionOffsets[]> {
    this.live(`read the offsets of "${topic}"`)
    const meta = await this.topics.cached(topic)
    try {
      const bounds = await Promise.all(
        Array.from({ length: meta.partitions }, (_, p) => this.retention.bounds(topic, p)),
      )
      return bounds.map(([end, start], partition) => ({ partition, start: Math.min(start, end), end }))
    } catch (e) {
      throw redisError(`Cannot read the offsets of "${topic}"`, e)
    }
  }

  /**
   * The end offsets, asked for now. Commands on one connection run in order, and appends of this
   * instance to the topic wait until the reads are on the wire, so every later send comes after.
   */
  endOffsetsSnapshot(topic: string): Promise<number[]> {
    if (this.closing) return Promise.reject(closedError('redis', `read the offsets of "${topic}"`))
    let issued!: () => void
    const gate = new Promise<void>((resolve) => (issued = resolve))
    const before = this.snapshotGates.get(topic)
    const both = before ? Promise.all([before, gate]).then(() => undefined) : gate
    this.snapshotGates.set(topic, both)
    const p = (async () => {
      try {
        const meta = await this.topics.cached(topic)
        const reads = Array.from({ length: meta.partitions }, (_, part) => this.retention.bounds(topic, part))
        issued()
        return (await Promise.all(reads)).map(([end]) => end)
      } catch (e) {
        throw redisError(`Cannot read the offsets of "${topic}"`, e)
      } finally {
        issued()
        if (this.snapshotGates.get(topic) === both) this.snapshotGates.delete(topic)
      }
    })()
    p.catch(() => undefined) // an unused snapshot must not be an unhandled rejection
    return p
  }

  async append(
    topic: string,
    partition: number,
    records: readonly RecordInput[],
    producerId: string,
    options: AppendOptions = {},
  ): Promise<number> {
    this.live(`append to "${topic}"`)
    // Written out so a fresh cached configuration costs no microtask before the script call.
    const meta = this.topics.fresh(topic) ?? (await this.topics.cached(topic))
    checkPartition(meta, topic, partition)
    const gate = this.snapshotGates.get(topic)
    if (gate) await gate
    let base: number
    try {
      base = await this.appender.append(
        topic,
        partition,
        records,
        producerId,
        meta.retention.maxMessages ?? 0,
        options.expectedEnd,
      )
    } catch (e) {
      if (e instanceof TopicNotFoundError) this.topics.forget(topic)
      throw e
    }
    this.retainSoon(topic, meta)
    if (meta.compact) this.compaction.track(meta)
    return base
  }

  /**
   * `append` for records of which some carry an id (`ID_HEADER`): see append-ids-7.lua. Ids live in
   * the partition's Cluster slot, in two generations (`:ids`, `:ids0`), are judged by the Redis
   * server's clock, and are kept about `MAX_REMEMBERED_IDS` at most. A call larger than one script
   * call's part (2000 records, 2 MiB) is stored part after part, each atomic.
   */
  async appendIdempotent(
    topic: string,
    partition: number,
    records: readonly RecordInput[],
    producerId: string,
    windowMs: number,
  ): Promise<IdempotentResult[]> {
    this.live(`append to "${topic}"`)
    checkIdempotent(records, windowMs)
    return this.appendEach(topic, partition, records.length, (maxMessages) =>
      this.appender.appendIdempotent(topic, partition, records, producerId, maxMessages, windowMs),
    )
  }

  /**
   * A processor's outputs (`TopicStore.appendSourced`): see append-src-7.lua. A partition's sources
   * live in its Cluster slot (`:src`, and one sorted set per source), so the check and the append
   * are one script on one node, and the lease deadline is judged by that server's clock.
   */
  async appendSourced(
    topic: string,
    partition: number,
    records: readonly RecordInput[],
    producerId: string,
    source: OutputSource,
    positions: readonly SourcePosition[],
  ): Promise<IdempotentResult[]> {
    this.live(`append to "${topic}"`)
    checkSourced(records.length, source, positions)
    return this.appendEach(topic, partition, records.length, (maxMessages) =>
      this.appender.appendSourced(topic, partition, records, producerId, maxMessages, source, positions),
    )
  }

  /**
   * An append answered record by record (ids, sources): the partition checked, a snapshot of the
   * topic's ends let through first, a topic found gone forgotten, retention applied after.
   */
  private async appendEach(
    topic: string,
    partition: number,
    count: number,
    write: (maxMessages: number) => Promise<IdempotentResult[]>,
  ): Promise<IdempotentResult[]> {
    const meta = await this.topics.cached(topic)
    checkPartition(meta, topic, partition)
    if (count === 0) return []
    const gate = this.snapshotGates.get(topic)
    if (gate) await gate
    let results: IdempotentResult[]
    try {
      results = await write(meta.retention.maxMessages ?? 0)
    } catch (e) {
      if (e instanceof TopicNotFoundError) this.topics.forget(topic)
      throw e
    }
    this.retainSoon(topic, meta)
    if (meta.compact) this.compaction.track(meta)
    return results
  }

  /** After an append: `maxAgeMs` / `maxBytes` retention, at most every RETENTION_EVERY_MS per topic, off the send path. */
  private retainSoon(topic: string, meta: TopicMeta): void {
    const r = meta.retention
    if (r.maxAgeMs !== undefined || r.maxBytes !== undefined) {
      const now = Date.now()
      if (now - (this.retainedAt.get(topic) ?? 0) >= RETENTION_EVERY_MS) {
        this.retainedAt.set(topic, now)
        // Off the send path; a failure here must not fail the send.
        void this.retention
          .apply({ ...meta, retention: { maxAgeMs: r.maxAgeMs, maxBytes: r.maxBytes } })
          .catch(() => undefined)
      }
    }
  }

  async openReader(topic: string, partition: number, from: number): Promise<PartitionReader> {
    this.live(`read "${topic}"`)
    const meta = await this.topics.cached(topic)
    checkPartition(meta, topic, partition)
    const reader = new RedisPartitionReader(
      this.scripts,
      this.keys,
      topic,
      partition,
      keyCodec(meta.keyType),
      from,
      meta.compact === true,
      {
        recent: () => this.watchers.recent(topic, partition),
        rollback: () => this.watchers.rollback(topic, partition),
      },
      (r) => this.readers.delete(r),
    )
    this.readers.add(reader)
    if (meta.compact) this.compaction.track(meta)
    return reader
  }

  async offsetForTime(topic: string, partition: number, time: number): Promise<number> {
    this.live(`seek "${topic}" by time`)
    await this.topics.cached(topic)
    return this.retention.offsetForTime(topic, partition, time)
  }

  watch(topic: string, partition: number, onData: () => void, persistent = true): () => void {
    this.live(`watch "${topic}"`)
    return this.watchers.watch(topic, partition, onData, persistent)
  }

  async trimBefore(topic: string, partition: number, before: number): Promise<number> {
    this.live(`trim "${topic}"`)
    await this.topics.cached(topic)
    return this.retention.trimBefore(topic, partition, before)
  }

  async applyRetention(topic: string): Promise<number> {
    this.live(`apply the retention of "${topic}"`)
    const meta = await this.topics.get(topic)
    let removed = await this.retention.apply(meta)
    if (meta.retention.consumed) removed += await trimConsumed(this.retention, this.admin, topic, meta.partitions)
    return removed
  }

  async compact(topic: string): Promise<CompactionStats> {
    this.live(`compact "${topic}"`)
    return this.compaction.compact(await this.topics.get(topic))
  }

  async lastCompaction(topic: string): Promise<CompactionStats | undefined> {
    this.live(`read the compaction of "${topic}"`)
    return this.compaction.last(await this.topics.get(topic))
  }

  async ping(): Promise<boolean> {
    if (this.closing) return false
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), 2000)
    })
    try {
      return (await Promise.race([this.client.ping(), timeout])) === 'PONG'
    } catch {
      return false
    } finally {
      clearTimeout(timer)
    }
  }

  /** Break blocked reads first (disconnect), then close the command connection. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.appender.close()
      this.compaction.close()
      this.watchers.close()
      this.notifier.close()
      this.shared.close()
      await Promise.all([...this.readers].map((r) => r.close()))
      let timer: NodeJS.Timeout | undefined
      await Promise.race([
        this.client.quit().catch(() => undefined),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, 1000)
          timer.unref()
        }),
      ])
      clearTimeout(timer)
      this.client.disconnect()
      this.writer?.disconnect()
    })()
    return this.closing
  }
}
