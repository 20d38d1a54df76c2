import type { BackgroundFailure } from '../../core/logger.js'
import { existsSync, readFileSync } from 'node:fs'
import { InvalidArgumentError, TopicNotFoundError } from '../../core/errors.js'
import { keyCodec } from '../../core/keys.js'
import type { FsyncPolicy } from '../../core/types.js'
import type {
  AppendOptions,
  CompactionStats,
  IdempotentResult,
  OutputSource,
  PartitionOffsets,
  PartitionReader,
  SourcePosition,
  TextFrame,
  TextFrames,
  TopicMeta,
  TopicStore,
} from '../backend.js'
import { OpenReaders } from '../open-readers.js'
import type { RecordInput } from '../record.js'
import { IdAppends } from './id-appends.js'
import { SourceAppends } from './source-appends.js'
import { lastAccessSync, markAccessSync } from './access-time.js'
import { Compactor, lastCompactionOf } from './compactor.js'
import { FdPool } from './fd-pool.js'
import { partitionDir, topicFile } from './layout.js'
import { applyPartitionRetention, partitionEndSync, partitionSpanSync, trimPartition } from './partition-span.js'
import type { PartitionAppender } from './appender.js'
import { PooledAppenders } from './pooled-appenders.js'
import { FilePartitionReader } from './reader.js'
import { NativeTextFrame } from './text-frame.js'
import { offsetForTime } from './time-seek.js'
import { createTopicDir, deleteTopicDir, listTopicDirs, parseTopicMeta, readTopicMeta } from './topic-store.js'
import type { WatchHub } from './watch-hub.js'

/** Options of the native topic store. */
export interface NativeStoreOptions {
  /** @default 'never' */
  fsync?: FsyncPolicy
  /** Roll to a new segment when the active one would exceed this many bytes. @default 67108864 (64 MiB) */
  segmentBytes?: number
  /** Cap on the segment and index fds kept open by all readers and appenders (see `FdPool`). @default 512 */
  maxOpenFiles?: number
  /** Told of background work that failed (a compaction pass). @default none */
  onBackgroundFailure?: BackgroundFailure
}

/** Producer id of the seals `compact` writes. */
const COMPACTION_PRODUCER = 'twainmq-compaction'

/** The frame as this store made it (`frames.frame`); another store's frame is refused. */
function ownFrame(topic: string, frame: TextFrame): NativeTextFrame {
  if (!(frame instanceof NativeTextFrame))
    throw new InvalidArgumentError(`appendFrame to topic "${topic}" was given a frame it did not make`)
  return frame
}

/** Topics in twainmq's native format: partitions of CRC-framed segments with sparse indexes (docs/format.md). */
export class NativeStore implements TopicStore {
  /** Every reader and appender of this store keeps its fds under this cap. */
  private readonly pool: FdPool
  private readonly appenders: PooledAppenders
  private readonly metas = new Map<string, TopicMeta>()
  private readonly fsync: FsyncPolicy
  private readonly segmentBytes: number
  private syncTimer: NodeJS.Timeout | undefined
  private readonly readers = new OpenReaders()
  private readonly compactor: Compactor
  private readonly idAppends = new IdAppends({
    appendVia: (topic, partition, write) => this.appendVia(topic, partition, write),
    openRawReader: (topic, partition, from) => this.openFileReader(topic, partition, from),
    offsetForTime: (topic, partition, time) => this.offsetForTime(topic, partition, time),
  })

  private readonly sourceAppends = new SourceAppends({
    appendVia: (topic, partition, write) => this.appendVia(topic, partition, write),
    openRawReader: (topic, partition, from) => this.openFileReader(topic, partition, from),
    partitionDir: (topic, partition) => partitionDir(this.root, topic, partition),
  })

  constructor(
    readonly root: string,
    private readonly hub: WatchHub,
    options: NativeStoreOptions = {},
  ) {
    this.fsync = options.fsync ?? 'never'
    this.segmentBytes = options.segmentBytes ?? 64 * 1024 * 1024
    this.pool = new FdPool(options.maxOpenFiles ?? 512)
    this.compactor = new Compactor(this.segmentBytes, options.onBackgroundFailure)
    this.appenders = new PooledAppenders(this.pool, { segmentBytes: this.segmentBytes, fsync: this.fsync })
    if (typeof this.fsync === 'number') {
      this.syncTimer = setInterval(() => {
        void this.appenders.syncDirty()
      }, this.fsync)
      this.syncTimer.unref()
    }
  }

  async createTopic(meta: TopicMeta): Promise<void> {
    await createTopicDir(this.root, meta, this.fsync === 'always')
    this.metas.set(meta.name, meta)
  }

  async deleteTopic(name: string): Promise<void> {
    this.forget(name)
    await deleteTopicDir(this.root, name)
  }

  listTopics(): Promise<string[]> {
    return listTopicDirs(this.root)
  }

  async markAccess(topic: string, at: number): Promise<void> {
    markAccessSync(this.root, topic, at)
  }

  async lastAccess(topic: string): Promise<number | undefined> {
    return lastAccessSync(this.root, topic)
  }

  async getTopic(name: string): Promise<TopicMeta> {
    const hit = this.metas.get(name)
    if (hit) {
      // Another process may have deleted it; a cheap existence check keeps the cache honest
      // (synchronous: a stat from the dentry cache costs less than a thread-pool round trip).
      if (existsSync(partitionDir(this.root, name, 0))) return hit
      this.forget(name)
    }
    const meta = await readTopicMeta(this.root, name)
    this.metas.set(name, meta)
    return meta
  }

  async offsets(topic: string): Promise<PartitionOffsets[]> {
    const meta = await this.getTopic(topic)
    const out: PartitionOffsets[] = []
    for (let p = 0; p < meta.partitions; p++) {
      // Synchronous page-cache reads; yield now and then so timers (heartbeats) run on a wide topic.
      if (p > 0 && p % 512 === 0) await new Promise((r) => setImmediate(r))
      out.push({ partition: p, ...partitionSpanSync(partitionDir(this.root, topic, p), topic) })
    }
    return out
  }

  /** Partition count of a topic right now, synchronously; undefined when it does not exist. */
  partitionsNow(topic: string): number | undefined {
    return this.metaNow(topic)?.partitions
  }

  /** A topic's config as stored now (synchronously, refreshing the cache); undefined when it does not exist. */
  private metaNow(topic: string): TopicMeta | undefined {
    let text: string
    try {
      text = readFileSync(topicFile(this.root, topic), 'utf8')
    } catch {
      this.metas.delete(topic)
      return undefined
    }
    const meta = parseTopicMeta(text, topicFile(this.root, topic), topic)
    this.metas.set(topic, meta)
    return meta
  }

  endOffsetsSnapshot(topic: string): number[] | undefined {
    try {
      const count = this.metas.get(topic)?.partitions ?? this.partitionsNow(topic)
      if (count === undefined) return undefined
      const ends: number[] = []
      for (let p = 0; p < count; p++) ends.push(partitionEndSync(partitionDir(this.root, topic, p), topic))
      return ends
    } catch {
      return undefined // missing topic or partition: the async path reports it properly
    }
  }

  async append(
    topic: string,
    partition: number,
    records: readonly RecordInput[],
    producerId: string,
    options: AppendOptions = {},
  ): Promise<number> {
    return this.appendVia(topic, partition, (a) => a.append(records, producerId, options.expectedEnd))
  }

  async appendIdempotent(
    topic: string,
    partition: number,
    records: readonly RecordInput[],
    producerId: string,
    windowMs: number,
  ): Promise<IdempotentResult[]> {
    return this.idAppends.append(topic, partition, records, producerId, windowMs)
  }

  async appendSourced(
    topic: string,
    partition: number,
    records: readonly RecordInput[],
    producerId: string,
    source: OutputSource,
    positions: readonly SourcePosition[],
  ): Promise<IdempotentResult[]> {
    return this.sourceAppends.append(topic, partition, records, producerId, source, positions)
  }

  /** Every topic of this store takes frames (the producer's path for plain text sends). */
  readonly frames: TextFrames = {
    frame: (_topic: string, producerId: string): NativeTextFrame => new NativeTextFrame(producerId),
    append: (topic: string, partition: number, frame: TextFrame): Promise<number> =>
      this.appendFrame(topic, partition, frame),
    appendNow: (topic: string, partition: number, frame: TextFrame): number | undefined =>
      this.appendFrameNow(topic, partition, frame),
    appendIdempotent: async (topic: string, partition: number, frame: TextFrame, windowMs: number) =>
      this.idAppends.appendFrame(topic, partition, ownFrame(topic, frame), windowMs),
  }

  private async appendFrame(topic: string, partition: number, frame: TextFrame): Promise<number> {
    const own = ownFrame(topic, frame)
    return this.appendVia(topic, partition, (a) => a.appendFrame(own))
  }

  /** `appendFrame` written at once when nothing needs waiting for; undefined when it must queue. */
  private appendFrameNow(topic: string, partition: number, frame: TextFrame): number | undefined {
    const own = ownFrame(topic, frame)
    try {
      return this.appenders.runNow(partitionDir(this.root, topic, partition), topic, partition, (a) => {
        const base = a.appendFrameNow(own)
        if (base !== undefined) this.written(topic, a)
        return base
      })
    } catch (e) {
      throw this.missing(topic, e)
    }
  }

  /** Run one append on the partition's appender; wake local tails, apply retention after a roll. */
  private async appendVia(
    topic: string,
    partition: number,
    write: (a: PartitionAppender) => Promise<number>,
  ): Promise<number> {
    try {
      return await this.appenders.run(partitionDir(this.root, topic, partition), topic, partition, async (a) => {
        const base = await write(a)
        this.written(topic, a)
        return base
      })
    } catch (e) {
      throw this.missing(topic, e)
    }
  }

  /** An append's error, after forgetting the topic when it was found missing. */
  private missing(topic: string, e: unknown): unknown {
    if (e instanceof TopicNotFoundError) this.forget(topic)
    return e
  }

  /** After an append: wake local tails; after a roll, apply retention (off the send path: a failure there must not fail the send). */
  private written(topic: string, a: PartitionAppender): void {
    this.hub.notify(a.dir)
    if (!a.rolled) return
    a.rolled = false
    void this.getTopic(topic)
      .then(async (m) => {
        await applyPartitionRetention(a.dir, topic, m.retention)
        this.compactor.afterRoll(a.dir, topic, m)
      })
      .catch(() => undefined)
  }

  async openReader(topic: string, partition: number, from: number): Promise<PartitionReader> {
    return this.openFileReader(topic, partition, from)
  }

  private async openFileReader(topic: string, partition: number, from: number): Promise<FilePartitionReader> {
    const meta = await this.getTopic(topic)
    const rekey = () => keyCodec((this.metaNow(topic) ?? meta).keyType)
    return this.readers.add(
      (onClose) =>
        new FilePartitionReader(
          partitionDir(this.root, topic, partition),
          topic,
          partition,
          keyCodec(meta.keyType),
          from,
          this.pool,
          rekey,
          onClose,
        ),
    )
  }

  async offsetForTime(topic: string, partition: number, time: number): Promise<number> {
    const meta = await this.getTopic(topic)
    return offsetForTime(partitionDir(this.root, topic, partition), topic, partition, keyCodec(meta.keyType), time)
  }

  watch(topic: string, partition: number, onData: () => void, persistent = true): () => void {
    return this.hub.subscribe(partitionDir(this.root, topic, partition), onData, undefined, persistent)
  }

  async trimBefore(topic: string, partition: number, before: number): Promise<number> {
    await this.getTopic(topic)
    return trimPartition(partitionDir(this.root, topic, partition), topic, before)
  }

  async applyRetention(topic: string): Promise<number> {
    const meta = await this.getTopic(topic)
    let removed = 0
    for (let p = 0; p < meta.partitions; p++) {
      removed += await applyPartitionRetention(partitionDir(this.root, topic, p), topic, meta.retention)
    }
    return removed
  }

  async compact(topic: string): Promise<CompactionStats> {
    const meta = await this.getTopic(topic)
    if (meta.compact !== true)
      throw new InvalidArgumentError(`Topic "${topic}" is not compacted (create it with compact: true to compact it)`)
    const stats: CompactionStats = { at: 0, before: { records: 0, bytes: 0 }, after: { records: 0, bytes: 0 } }
    for (let p = 0; p < meta.partitions; p++) {
      const dir = partitionDir(this.root, topic, p)
      // Seal what was sent so far: a pass reaches only sealed segments.
      await this.appenders
        .run(dir, topic, p, (a) => a.rollNow(COMPACTION_PRODUCER))
        .catch((e: unknown) => {
          throw this.missing(topic, e)
        })
      const done = await this.compactor.pass(dir, topic, meta)
      for (const k of ['before', 'after'] as const) {
        stats[k].records += done[k].records
        stats[k].bytes += done[k].bytes
      }
    }
    stats.at = Date.now()
    return stats
  }

  async lastCompaction(topic: string): Promise<CompactionStats | undefined> {
    const meta = await this.getTopic(topic)
    if (meta.compact !== true) return undefined
    return lastCompactionOf(Array.from({ length: meta.partitions }, (_, p) => partitionDir(this.root, topic, p)))
  }

  private forget(topic: string): void {
    this.metas.delete(topic)
    this.appenders.forgetTopic(topic)
    this.idAppends.forgetTopic(topic)
    this.sourceAppends.forgetTopic(topic)
  }

  async close(): Promise<void> {
    if (this.syncTimer) clearInterval(this.syncTimer)
    this.syncTimer = undefined
    this.idAppends.close()
    this.sourceAppends.close()
    await this.readers.closeAll()
    await this.compactor.close()
    await this.appenders.close()
  }
}
