import type { BackgroundFailure } from '../../core/logger.js'
import { access } from 'node:fs/promises'
import { makeDirs } from './make-dirs.js'
import type { FsyncPolicy } from '../../core/types.js'
import { TopicNotFoundError } from '../../core/errors.js'
import type {
  AppendOptions,
  CompactionStats,
  IdempotentResult,
  OutputSource,
  SourcePosition,
  Backend,
  PartitionOffsets,
  PartitionReader,
  TextFrame,
  TextFrames,
  TopicMeta,
  TopicStore,
} from '../backend.js'
import type { RecordInput } from '../record.js'
import { closedError, closedGuard } from '../closed-guard.js'
import type { GroupAdmin } from '../group-admin.js'
import { trimConsumed } from '../trim-consumed.js'
import { FileGroupStore } from './group-store.js'
import { NativeStore } from './native-store.js'
import { WatchHub } from './watch-hub.js'

/** A store for topics of another on-disk format found in the same root (Python TwainMQ 0.1.9). */
export interface ForeignFormat {
  /** Whether `topic` is stored in this format (synchronous: it is asked on every routed call). */
  owns(topic: string): boolean
  store: TopicStore & { partitionsNow(topic: string): number | undefined }
}

/** Options of the file backend. */
export interface FileBackendOptions {
  /** @default 'never' */
  fsync?: FsyncPolicy
  /** Roll to a new segment when the active one would exceed this many bytes. @default 67108864 (64 MiB) */
  segmentBytes?: number
  /** Safety-net poll interval of tails. @default 250 */
  pollMs?: number
  /** Cap on the segment and index fds kept open by readers and appenders of native topics. @default 512 */
  maxOpenFiles?: number
  /** Told of background work that failed (a compaction pass). @default none */
  onBackgroundFailure?: BackgroundFailure
  /** Build the store of a foreign format (given the shared watch hub), and whether new topics use it. */
  foreign?: { create(root: string, hub: WatchHub): ForeignFormat; createTopicsInIt: boolean }
}

/**
 * The embedded file backend: a directory holds topics (native format, or Python TwainMQ's when a
 * foreign format is configured; the format is per topic) and consumer-group state (docs/format.md).
 */
export class FileBackend implements Backend {
  readonly kind = 'file' as const
  readonly groups: FileGroupStore
  /** Group administration: the same group store (partitioned groups only). */
  readonly admin: GroupAdmin
  private readonly hub: WatchHub
  private readonly native: NativeStore
  private readonly foreign: ForeignFormat | undefined
  private readonly createForeign: boolean
  private closed = false

  constructor(
    readonly root: string,
    options: FileBackendOptions = {},
  ) {
    this.hub = new WatchHub({ pollMs: options.pollMs ?? 250 })
    this.native = new NativeStore(root, this.hub, {
      fsync: options.fsync,
      segmentBytes: options.segmentBytes,
      maxOpenFiles: options.maxOpenFiles,
      onBackgroundFailure: options.onBackgroundFailure,
    })
    this.foreign = options.foreign?.create(root, this.hub)
    this.createForeign = options.foreign?.createTopicsInIt ?? false
    const groups = new FileGroupStore(root, this.hub, (t) => this.at(t).partitionsNow(t))
    this.groups = closedGuard(groups, () => this.closed, 'file', ['watchGroup'])
    this.admin = this.groups
  }

  async init(): Promise<void> {
    makeDirs(this.root, 'the store directory')
  }

  /** The store that holds `topic`; `ClosedError` once the backend is closed. */
  private at(topic: string): NativeStore | ForeignFormat['store'] {
    if (this.closed) throw closedError('file', `use topic "${topic}"`)
    return this.foreign?.owns(topic) ? this.foreign.store : this.native
  }

  async createTopic(meta: TopicMeta): Promise<void> {
    if (this.closed) throw closedError('file', `create topic "${meta.name}"`)
    return this.foreign && this.createForeign ? this.foreign.store.createTopic(meta) : this.native.createTopic(meta)
  }
  async deleteTopic(name: string): Promise<void> {
    return this.at(name).deleteTopic(name)
  }
  async listTopics(): Promise<string[]> {
    if (this.closed) throw closedError('file', 'list topics')
    const names = new Set(await this.native.listTopics())
    if (this.foreign) for (const n of await this.foreign.store.listTopics()) names.add(n)
    return [...names].sort()
  }
  async getTopic(name: string): Promise<TopicMeta> {
    return this.at(name).getTopic(name)
  }
  /** Topics of a foreign format keep no access time (the gateway's streams are native topics). */
  async markAccess(topic: string, at: number): Promise<void> {
    return this.at(topic).markAccess(topic, at)
  }
  async lastAccess(topic: string): Promise<number | undefined> {
    return this.at(topic).lastAccess(topic)
  }
  async offsets(topic: string): Promise<PartitionOffsets[]> {
    return this.at(topic).offsets(topic)
  }
  endOffsetsSnapshot(topic: string): number[] | Promise<number[]> | undefined {
    return this.at(topic).endOffsetsSnapshot(topic)
  }
  async append(
    topic: string,
    partition: number,
    records: readonly RecordInput[],
    producerId: string,
    options?: AppendOptions,
  ): Promise<number> {
    return this.at(topic).append(topic, partition, records, producerId, options)
  }
  async appendIdempotent(
    topic: string,
    partition: number,
    records: readonly RecordInput[],
    producerId: string,
    windowMs: number,
  ): Promise<IdempotentResult[]> {
    return this.at(topic).appendIdempotent(topic, partition, records, producerId, windowMs)
  }
  async appendSourced(
    topic: string,
    partition: number,
    records: readonly RecordInput[],
    producerId: string,
    source: OutputSource,
    positions: readonly SourcePosition[],
  ): Promise<IdempotentResult[]> {
    return this.at(topic).appendSourced(topic, partition, records, producerId, source, positions)
  }
  /** Native topics take frames built by the producer; a foreign format's do not. */
  readonly frames: TextFrames = {
    frame: (topic: string, producerId: string): TextFrame | undefined =>
      this.at(topic) === this.native ? this.native.frames.frame(topic, producerId) : undefined,
    append: async (topic: string, partition: number, frame: TextFrame): Promise<number> => {
      if (this.at(topic) !== this.native) throw new TopicNotFoundError(`Topic "${topic}" is no longer a native topic`)
      return this.native.frames.append(topic, partition, frame)
    },
    appendNow: (topic: string, partition: number, frame: TextFrame): number | undefined =>
      this.at(topic) === this.native ? this.native.frames.appendNow(topic, partition, frame) : undefined,
    appendIdempotent: async (topic: string, partition: number, frame: TextFrame, windowMs: number) => {
      if (this.at(topic) !== this.native) throw new TopicNotFoundError(`Topic "${topic}" is no longer a native topic`)
      return this.native.frames.appendIdempotent(topic, partition, frame, windowMs)
    },
  }
  async openReader(topic: string, partition: number, from: number): Promise<PartitionReader> {
    return this.at(topic).openReader(topic, partition, from)
  }
  async offsetForTime(topic: string, partition: number, time: number): Promise<number> {
    return this.at(topic).offsetForTime(topic, partition, time)
  }
  watch(topic: string, partition: number, onData: () => void, persistent = true): () => void {
    return this.at(topic).watch(topic, partition, onData, persistent)
  }
  async trimBefore(topic: string, partition: number, before: number): Promise<number> {
    return this.at(topic).trimBefore(topic, partition, before)
  }
  /** Size/age/count limits of the topic's store, then `consumed`: what every group has committed. */
  async applyRetention(topic: string): Promise<number> {
    let removed = await this.at(topic).applyRetention(topic)
    const meta = await this.getTopic(topic)
    if (meta.retention.consumed) removed += await trimConsumed(this, this.admin, topic, meta.partitions)
    return removed
  }

  async compact(topic: string): Promise<CompactionStats> {
    return this.at(topic).compact(topic)
  }
  async lastCompaction(topic: string): Promise<CompactionStats | undefined> {
    return this.at(topic).lastCompaction(topic)
  }

  async ping(): Promise<boolean> {
    if (this.closed) return false
    try {
      await access(this.root)
      return true
    } catch {
      return false
    }
  }

  async close(): Promise<void> {
    this.closed = true
    this.hub.close()
    await Promise.all([this.native.close(), this.foreign?.store.close()])
  }
}
