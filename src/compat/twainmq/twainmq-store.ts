import { closeSync, existsSync, openSync, readFileSync, statSync } from 'node:fs'
import { mkdir, readdir, rename, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { InvalidArgumentError, TopicExistsError, TopicNotFoundError, backendError } from '../../core/errors.js'
import type { FsyncPolicy } from '../../core/types.js'
import type { PartitionOffsets, PartitionReader, TopicMeta, TopicStore } from '../../backends/backend.js'
import type { ForeignFormat } from '../../backends/file/file-backend.js'
import type { WatchHub } from '../../backends/file/watch-hub.js'
import type { RecordInput } from '../../backends/record.js'
import { TwainmqAppender } from './appender.js'
import { CHUNK_EXT, ChunkDirectory, chunkName, utcDay } from './chunks.js'
import { LineIndexCache } from './line-index.js'
import { encodeLine, keyWidthOf, keyTypeOfWidth, lineFormat, msToSeconds, recordKeyBytes, recordPayload, type LineFormat } from './line-codec.js'
import { TwainmqPartitionReader, type LineProblemHook } from './reader.js'
import { offsetForTimeSync } from './time-seek.js'
import { GROUP_TOPIC_PREFIX, TWC_EXT, parseTwc, twcPath, writeTwc, type TwcConfig } from './twc-config.js'

const DEFAULT_MAX_MESSAGE_BYTES = 1024 * 1024
const NAME_RE = /^[A-Za-z0-9_.-]{1,200}$/
/** How long `owns()` trusts what it found (it is asked on every routed call). */
const OWNS_TTL_MS = 250

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
}

/**
 * Topics in Python TwainMQ 0.1.9's on-disk format (DESIGN §7) inside a file-backend root:
 * `<root>/<topic>.twc` configs and `<root>/<topic>/<P>-<YYYYMMDD>_<start>.tmf` day chunks of
 * base85 lines. Python producers and consumers can share the topics with twainmq at the same time.
 * Consumer groups over these topics use the file backend's own group store, not TwainMQ's group log.
 */
export class TwainmqStore implements TopicStore {
  private readonly topics = new Map<string, TopicState>()
  private readonly appenders = new Map<string, TwainmqAppender>()
  private readonly readers = new Set<PartitionReader>()
  private readonly lines = new LineIndexCache()
  private readonly ownsCache = new Map<string, { owns: boolean; until: number }>()
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

  /** Whether `topic` is a TwainMQ topic here: it has a `.twc` and is not a native topic. */
  owns(topic: string): boolean {
    const now = Date.now()
    const hit = this.ownsCache.get(topic)
    if (hit && hit.until > now) return hit.owns
    const owns = existsSync(twcPath(this.root, topic)) && !existsSync(join(this.root, topic, 'topic.json'))
    if (this.ownsCache.size > 10_000) this.ownsCache.clear()
    this.ownsCache.set(topic, { owns, until: now + OWNS_TTL_MS })
    return owns
  }

  async createTopic(meta: TopicMeta): Promise<void> {
    const keyWidth = keyWidthOf(meta.keyType)
    if (Object.values(meta.retention).some((v) => v !== undefined && v !== false)) {
      throw new InvalidArgumentError(`Retention is not supported by the twainmq-v1 format (topic "${meta.name}" asked for ${JSON.stringify(meta.retention)})`)
    }
    const dir = join(this.root, meta.name)
    await mkdir(this.root, { recursive: true })
    try {
      await mkdir(dir) // claims the name (Python's create_topic checks this directory too)
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') throw new TopicExistsError(`Topic "${meta.name}" already exists in ${this.root}`)
      throw backendError(`Cannot create topic "${meta.name}"`, e)
    }
    const config: TwcConfig = {
      keyWidth,
      partitions: meta.partitions,
      messageTypes: new Map(meta.messageTypes.map((name, i) => [name, i])),
      maxMessageBytes: meta.maxMessageBytes === DEFAULT_MAX_MESSAGE_BYTES ? undefined : meta.maxMessageBytes,
    }
    try {
      await writeTwc(this.root, meta.name, config)
      // Today's empty chunk of every partition, as a Python producer creates on start: a Python
      // consumer started before the first message then reads from offset 0 (its bug 4).
      const today = utcDay()
      for (let p = 0; p < meta.partitions; p++) closeSync(openSync(join(dir, chunkName(p, today, 0)), 'a'))
    } catch (e) {
      await rm(dir, { recursive: true, force: true }).catch(() => undefined)
      throw backendError(`Cannot create topic "${meta.name}"`, e)
    }
    this.ownsCache.delete(meta.name)
  }

  async deleteTopic(name: string): Promise<void> {
    await this.getTopic(name)
    this.forget(name)
    const dir = join(this.root, name)
    const gone = join(this.root, `~deleting-${name}-${randomBytes(6).toString('hex')}`)
    try {
      await rename(dir, gone) // out of sight at once
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new TopicNotFoundError(`Topic "${name}" does not exist in ${this.root}`)
      throw backendError(`Cannot delete topic "${name}"`, e)
    }
    // Unlike Python's delete_topic, the config goes too (else list_topics would still show it).
    await rm(twcPath(this.root, name), { force: true })
    await rm(gone, { recursive: true, force: true })
  }

  async listTopics(): Promise<string[]> {
    let names: string[]
    try {
      names = await readdir(this.root)
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return []
      throw backendError(`Cannot list ${this.root}`, e)
    }
    const out: string[] = []
    for (const n of names) {
      if (!n.endsWith(TWC_EXT)) continue
      const topic = n.slice(0, -TWC_EXT.length)
      if (topic.startsWith(GROUP_TOPIC_PREFIX) || topic.startsWith('__') || !NAME_RE.test(topic) || topic === '.' || topic === '..') continue
      // A topic Python's delete_topic removed leaves its config behind: not a topic any more.
      if (existsSync(join(this.root, topic)) && this.owns(topic)) out.push(topic)
    }
    return out.sort()
  }

  async getTopic(name: string): Promise<TopicMeta> {
    return this.state(name).meta
  }

  /** The cached state of a topic, re-read when its config changed; `TopicNotFoundError` when absent. */
  private state(name: string): TopicState {
    const path = twcPath(this.root, name)
    const st = statSync(path, { throwIfNoEntry: false })
    const dir = join(this.root, name)
    if (!st || !existsSync(dir)) {
      this.forget(name)
      throw new TopicNotFoundError(`Topic "${name}" does not exist in ${this.root}`)
    }
    const hit = this.topics.get(name)
    if (hit && hit.twcMtime === st.mtimeMs) return hit
    let text: string
    try {
      text = readFileSync(path, 'utf8')
    } catch (e) {
      throw backendError(`Cannot read ${path}`, e)
    }
    const config = parseTwc(text, path)
    const format = lineFormat(config.keyWidth, config.messageTypes)
    const messageTypes = [...config.messageTypes].sort((a, b) => a[1] - b[1]).map(([n]) => n)
    const meta: TopicMeta = {
      name,
      partitions: config.partitions,
      keyType: keyTypeOfWidth(config.keyWidth),
      messageTypes,
      retention: {},
      maxMessageBytes: config.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
      createdAt: st.birthtimeMs || st.mtimeMs,
    }
    const s: TopicState = { meta, format, dir: hit?.dir ?? new ChunkDirectory(dir, name), twcMtime: st.mtimeMs }
    this.topics.set(name, s)
    return s
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

  endOffsetsNow(topic: string): number[] | undefined {
    try {
      return this.offsetsSync(topic).map((o) => o.end)
    } catch {
      return undefined
    }
  }

  async append(topic: string, partition: number, records: readonly RecordInput[], _producerId: string): Promise<number> {
    const s = this.state(topic)
    if (!Number.isInteger(partition) || partition < 0 || partition >= s.meta.partitions) {
      throw new InvalidArgumentError(`Partition ${partition} does not exist in topic "${topic}" (partitions 0..${s.meta.partitions - 1})`)
    }
    const f = s.format
    const lines: Buffer[] = new Array(records.length)
    for (let i = 0; i < records.length; i++) {
      const r = records[i] as RecordInput
      if (r.headers && Object.keys(r.headers).length > 0) {
        throw new InvalidArgumentError(`TwainMQ topic "${topic}" cannot store headers (the twainmq-v1 line has no place for them): send without headers`)
      }
      lines[i] = encodeLine(recordKeyBytes(r.key, f.keyWidth), msToSeconds(r.timestamp), recordPayload(f, topic, r.kind, r.value, r.type))
    }
    const id = `${topic}/${partition}`
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
    const r = new TwainmqPartitionReader(s.dir, this.lines, topic, partition, s.format, from, this.options.onProblem)
    this.readers.add(r)
    const close = r.close.bind(r)
    r.close = async () => {
      this.readers.delete(r)
      await close()
    }
    return r
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
    throw new InvalidArgumentError(`Trimming is not supported by the twainmq-v1 format (topic "${topic}"): TwainMQ keeps every day chunk`)
  }

  async applyRetention(topic: string): Promise<number> {
    this.state(topic)
    return 0 // TwainMQ topics have no retention limits
  }

  private forget(topic: string): void {
    const s = this.topics.get(topic)
    this.topics.delete(topic)
    this.ownsCache.delete(topic)
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
    await Promise.all([...this.readers].map((r) => r.close()))
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

