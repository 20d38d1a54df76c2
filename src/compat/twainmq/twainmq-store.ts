import { partitionKey } from '../../core/partition-key.js'
import { existsSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { InvalidArgumentError, TopicNotFoundError } from '../../core/errors.js'
import type { FsyncPolicy } from '../../core/types.js'
import type {
  CompactionStats,
  AppendOptions,
  IdempotentResult,
  PartitionOffsets,
  PartitionReader,
  TopicMeta,
  TopicStore,
} from '../../backends/backend.js'
import type { ForeignFormat } from '../../backends/file/file-backend.js'
import type { WatchHub } from '../../backends/file/watch-hub.js'
import { OpenReaders } from '../../backends/open-readers.js'
import type { RecordInput } from '../../backends/record.js'
import { TwainmqAppender } from './appender.js'
import { CHUNK_EXT, ChunkDirectory } from './chunks.js'
import { LineIndexCache } from './line-index.js'
import { encodeLine, lineFormat, msToSeconds, recordKeyBytes, recordPayload, type LineFormat } from './line-codec.js'
import { TwainmqPartitionReader, type LineProblemHook } from './reader.js'
import { offsetForTimeSync } from './time-seek.js'
import { createTopicFiles, deleteTopicFiles, listTopicNames, readTopicConfig } from './topic-files.js'
import { twcPath } from './twc-config.js'

/** How long `owns()` trusts what it found (it is asked on every routed call). */
const OWNS_TTL_MS = 250
/** How long a topic's checked state is used without looking at the disk again. */
const STATE_TTL_MS = 100

/** Options of the TwainMQ topic store. */
export interface TwainmqStoreOptions {
  /** When appends are forced to disk (Python TwainMQ never syncs). @default 'never' */
  fsync?: FsyncPolicy
  /** Told about every line delivered with `message.error` (corrupt line, unknown type id). */
  onProblem?: LineProblemHook
}

interface TopicState {
  meta: TopicMeta
  format: LineFormat
  dir: ChunkDirectory
  twcMtime: number
  /** When the config and directory were last seen (ms). */
  checkedAt: number
}

/**
 * Topics in Python TwainMQ 0.1.9's on-disk format (docs/twainmq.md) inside a file-backend root:
 * `<root>/<topic>.twc` configs and `<root>/<topic>/<P>-<YYYYMMDD>_<start>.tmf` day chunks of
 * base85 lines. Python producers and consumers can share the topics with twainmq at the same time.
 * Consumer groups over these topics use the file backend's own group store, not TwainMQ's group log.
 */
export class TwainmqStore implements TopicStore {
  private readonly topics = new Map<string, TopicState>()
  private readonly appenders = new Map<string, TwainmqAppender>()
  private readonly readers = new OpenReaders()
  private readonly lines = new LineIndexCache()
  /** Topics found not to be ours, until when (ms). */
  private readonly notOurs = new Map<string, number>()
  private readonly fsync: FsyncPolicy
  private syncTimer: NodeJS.Timeout | undefined

  constructor(
    readonly root: string,
    private readonly hub: WatchHub,
    private readonly options: TwainmqStoreOptions = {},
  ) {
    this.fsync = options.fsync ?? 'never'
    if (typeof this.fsync === 'number') {
      this.syncTimer = setInterval(() => {
        for (const a of this.appenders.values()) a.syncIfDirty()
      }, this.fsync)
      this.syncTimer.unref()
    }
  }

  /**
   * Whether `topic` is a TwainMQ topic here: it has a `.twc` and is not a native topic. Asked on every
   * routed call, so a "no" (a native topic) is remembered for OWNS_TTL_MS; a "yes" is checked each
   * time (a native topic may be created over a config Python's delete_topic left behind).
   */
  owns(topic: string): boolean {
    const now = Date.now()
    const until = this.notOurs.get(topic)
    if (until !== undefined && until > now && now >= until - OWNS_TTL_MS) return false
    const owns = existsSync(twcPath(this.root, topic)) && !existsSync(join(this.root, topic, 'topic.json'))
    if (owns) this.notOurs.delete(topic)
    else {
      if (this.notOurs.size > 10_000) this.notOurs.clear()
      this.notOurs.set(topic, now + OWNS_TTL_MS)
    }
    return owns
  }

  async createTopic(meta: TopicMeta): Promise<void> {
    await createTopicFiles(this.root, meta)
    this.notOurs.delete(meta.name)
  }

  async deleteTopic(name: string): Promise<void> {
    this.state(name)
    this.forget(name)
    await deleteTopicFiles(this.root, name)
  }

  listTopics(): Promise<string[]> {
    return listTopicNames(this.root, (t) => this.owns(t))
  }

  async getTopic(name: string): Promise<TopicMeta> {
    return this.state(name).meta
  }

  /**
   * The cached state of a topic, re-read when its config changed; `TopicNotFoundError` when absent.
   * A state checked less than STATE_TTL_MS ago is used as is (appends notice a deleted topic anyway:
   * its directory listing fails).
   */
  private state(name: string): TopicState {
    const now = Date.now()
    const cached = this.topics.get(name)
    if (cached && now - cached.checkedAt < STATE_TTL_MS && now >= cached.checkedAt) return cached
    const path = twcPath(this.root, name)
    const st = statSync(path, { throwIfNoEntry: false })
    const dir = join(this.root, name)
    if (!st || !existsSync(dir)) {
      this.forget(name)
      throw new TopicNotFoundError(`Topic "${name}" does not exist in ${this.root}`)
    }
    const hit = this.topics.get(name)
    if (hit && hit.twcMtime === st.mtimeMs) {
      hit.checkedAt = now
      return hit
    }
    const { meta, config } = readTopicConfig(this.root, name, st)
    const format = lineFormat(config.keyWidth, config.messageTypes)
    const s: TopicState = {
      meta,
      format,
      dir: hit?.dir ?? new ChunkDirectory(dir, name),
      twcMtime: st.mtimeMs,
      checkedAt: now,
    }
    this.topics.set(name, s)
    return s
  }

  /** A TwainMQ root has no place for access times (Python TwainMQ would not expect one): not kept. */
  async markAccess(): Promise<void> {}
  async lastAccess(): Promise<number | undefined> {
    return undefined
  }

  async offsets(topic: string): Promise<PartitionOffsets[]> {
    return this.offsetsSync(topic)
  }

  private offsetsSync(topic: string): PartitionOffsets[] {
    const s = this.state(topic)
    const out: PartitionOffsets[] = []
    for (let p = 0; p < s.meta.partitions; p++) {
      const chunks = s.dir.partition(p)
      const first = chunks[0]
      const last = chunks[chunks.length - 1]
      const end = last ? last.start + this.lines.get(s.dir.path(last)).refresh().lines : 0
      out.push({ partition: p, start: first ? Math.min(first.start, end) : 0, end })
    }
    return out
  }

  /** Partition count of a topic right now, synchronously; undefined when it does not exist. */
  partitionsNow(topic: string): number | undefined {
    try {
      return this.state(topic).meta.partitions
    } catch {
      return undefined
    }
  }

  endOffsetsSnapshot(topic: string): number[] | undefined {
    try {
      return this.offsetsSync(topic).map((o) => o.end)
    } catch {
      return undefined
    }
  }

  /** Refused: the twainmq-v1 format keeps no headers, so it has no place for the ids. */
  async appendIdempotent(topic: string): Promise<IdempotentResult[]> {
    throw new InvalidArgumentError(
      `TwainMQ topic "${topic}" cannot take sends with an id: the twainmq-v1 format keeps no headers, where the ids are stored; use a native topic`,
    )
  }

  /** Refused: the twainmq-v1 format keeps no headers, where outputs carry their source. */
  async appendSourced(topic: string): Promise<IdempotentResult[]> {
    throw new InvalidArgumentError(
      `TwainMQ topic "${topic}" cannot take a processor's outputs: the twainmq-v1 format keeps no headers, where an output's source is stored; use a native topic`,
    )
  }

  async append(
    topic: string,
    partition: number,
    records: readonly RecordInput[],
    _producerId: string,
    options: AppendOptions = {},
  ): Promise<number> {
    if (options.expectedEnd !== undefined) {
      throw new InvalidArgumentError(
        `TwainMQ topic "${topic}" cannot take a compare-and-append (expectedEnd ${options.expectedEnd}): the twainmq-v1 format has no place for the headers its users (the HTTP gateway) write; use a native topic`,
      )
    }
    const s = this.state(topic)
    if (!Number.isInteger(partition) || partition < 0 || partition >= s.meta.partitions) {
      throw new InvalidArgumentError(
        `Partition ${partition} does not exist in topic "${topic}" (partitions 0..${s.meta.partitions - 1})`,
      )
    }
    const f = s.format
    const lines: Buffer[] = new Array(records.length)
    for (let i = 0; i < records.length; i++) {
      const r = records[i] as RecordInput
      if (r.headers && Object.keys(r.headers).length > 0) {
        throw new InvalidArgumentError(
          `TwainMQ topic "${topic}" cannot store headers (the twainmq-v1 line has no place for them): send without headers`,
        )
      }
      lines[i] = encodeLine(
        recordKeyBytes(r.key, f.keyWidth),
        msToSeconds(r.timestamp),
        recordPayload(f, topic, r.kind, r.value, r.type),
      )
    }
    const id = partitionKey(topic, partition)
    let a = this.appenders.get(id)
    if (!a) this.appenders.set(id, (a = new TwainmqAppender(this.root, s.dir, this.lines, partition, this.fsync)))
    let base: number
    try {
      base = await a.append(lines.length === 1 ? (lines[0] as Buffer) : Buffer.concat(lines))
    } catch (e) {
      if (e instanceof TopicNotFoundError) this.forget(topic)
      throw e
    }
    this.hub.notify(s.dir.dir)
    return base
  }

  async openReader(topic: string, partition: number, from: number): Promise<PartitionReader> {
    const s = this.state(topic)
    return this.readers.add(
      (onClose) =>
        new TwainmqPartitionReader(
          s.dir,
          this.lines,
          topic,
          partition,
          s.format,
          from,
          this.options.onProblem,
          onClose,
        ),
    )
  }

  async offsetForTime(topic: string, partition: number, time: number): Promise<number> {
    const s = this.state(topic)
    const end = (this.offsetsSync(topic)[partition] as PartitionOffsets).end
    return offsetForTimeSync(s.dir, partition, s.format, time, end)
  }

  watch(topic: string, _partition: number, onData: () => void, persistent = true): () => void {
    // Every partition's chunks live in the topic directory: one shared watch of it (spurious wakes are harmless).
    return this.hub.subscribe(join(this.root, topic), onData, CHUNK_EXT, persistent)
  }

  async trimBefore(topic: string, _partition: number, _before: number): Promise<number> {
    this.state(topic)
    throw new InvalidArgumentError(
      `Trimming is not supported by the twainmq-v1 format (topic "${topic}"): TwainMQ keeps every day chunk`,
    )
  }

  /** Compaction of file topics is not on this branch. */
  async compact(topic: string): Promise<CompactionStats> {
    throw new Error(`Compaction of "${topic}" is not implemented on this branch`)
  }

  async lastCompaction(_topic: string): Promise<CompactionStats | undefined> {
    return undefined
  }

  async applyRetention(topic: string): Promise<number> {
    this.state(topic)
    return 0 // TwainMQ topics have no retention limits
  }

  private forget(topic: string): void {
    const s = this.topics.get(topic)
    this.topics.delete(topic)
    this.notOurs.delete(topic)
    for (const [id, a] of this.appenders) {
      if (a.topic === topic) {
        a.close()
        this.appenders.delete(id)
      }
    }
    if (s) this.lines.forget(s.dir.dir)
  }

  async close(): Promise<void> {
    if (this.syncTimer) clearInterval(this.syncTimer)
    this.syncTimer = undefined
    await this.readers.closeAll()
    for (const a of this.appenders.values()) {
      a.syncIfDirty()
      a.close()
    }
    this.appenders.clear()
  }
}

/** The `FileBackendOptions.foreign.create` of the twainmq-v1 format. */
export function twainmqFormat(root: string, hub: WatchHub, options?: TwainmqStoreOptions): ForeignFormat {
  const store = new TwainmqStore(root, hub, options)
  return { owns: (topic) => store.owns(topic), store }
}
