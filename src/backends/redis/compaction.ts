import type { BackgroundFailure } from '../../core/logger.js'
import { randomBytes } from 'node:crypto'
import { InvalidArgumentError, TopicNotFoundError } from '../../core/errors.js'
import type { CompactionStats, TopicMeta } from '../backend.js'
import { redisError, type Client } from './connection.js'
import type { RedisKeys } from './keys.js'
import type { Scripts } from './scripts.js'

/** How long a tombstone of a compacted topic is kept when its meta names no `tombstoneRetentionMs`. */
export const DEFAULT_TOMBSTONE_RETENTION_MS = 86_400_000
/** How often a process compacts the compacted topics it uses, in the background. */
export const COMPACT_EVERY_MS = 30_000
/**
 * Entries one compaction script call looks at: each call is atomic, so this bounds how long Redis
 * is busy with it, whatever the partition's size.
 */
export const COMPACT_STEP = 500

/** One partition's pass, as its last script call answered. */
interface PartitionPass {
  at: number
  before: { records: number; bytes: number }
  after: { records: number; bytes: number }
}

/**
 * Compacted topics on Redis (docs/format.md, "Compacted topics on Redis"): passes of
 * scripts/compact-6.lua over each partition, in bounded atomic steps whose cursor, key index and
 * counts live in the partition's own Cluster slot. A pass removes, for every key, its records older
 * than the latest one, and tombstones seen more than `tombstoneRetentionMs` ago.
 *
 * In the background, every process whose store appended to or opened a reader on a compacted topic
 * runs a pass over each of its partitions every {@link COMPACT_EVERY_MS}, when it takes the
 * partition's lease (SET NX PX for that period): with several processes a partition is compacted
 * about once a period, by one of them. The lease only saves work: steps of two processes
 * interleaving share the cursor, so a lapsed lease (a slow pass) or an explicit `compact()` during a
 * background pass removes nothing wrongly.
 */
export class RedisCompaction {
  private readonly tracked = new Set<string>()
  private timer: NodeJS.Timeout | undefined
  private ticking = false
  private closed = false
  private readonly token = randomBytes(6).toString('hex')

  constructor(
    private readonly client: Client,
    private readonly scripts: Scripts,
    private readonly keys: RedisKeys,
    private readonly meta: (topic: string) => Promise<TopicMeta>,
    private readonly everyMs = COMPACT_EVERY_MS,
    private readonly step = COMPACT_STEP,
    private readonly failed?: BackgroundFailure,
  ) {}

  /** A compacted topic this process uses: compact it in the background from now on (others are ignored). */
  track(meta: TopicMeta): void {
    if (!meta.compact || this.closed || this.tracked.has(meta.name)) return
    this.tracked.add(meta.name)
    if (!this.timer) {
      this.timer = setInterval(() => void this.tick(), this.everyMs)
      this.timer.unref()
    }
  }

  /** One pass over every partition now. @throws InvalidArgumentError when the topic is not compacted. */
  async compact(meta: TopicMeta): Promise<CompactionStats> {
    if (!meta.compact)
      throw new InvalidArgumentError(`Topic "${meta.name}" is not compacted (create it with { compact: true })`)
    const passes: PartitionPass[] = []
    for (let p = 0; p < meta.partitions; p++) passes.push(await this.pass(meta, p))
    return sum(passes)
  }

  /** The last pass of each partition, summed (`at`: the latest); undefined when none has run. */
  async last(meta: TopicMeta): Promise<CompactionStats | undefined> {
    if (!meta.compact) return undefined
    let states: Array<Array<string | null>>
    try {
      states = await Promise.all(
        Array.from({ length: meta.partitions }, (_, p) =>
          this.client.hmget(this.keys.compactState(meta.name, p), 'at', 'bn', 'bb', 'an', 'ab'),
        ),
      )
    } catch (e) {
      throw redisError(`Cannot read the compaction state of "${meta.name}"`, e)
    }
    const passes = states
      .filter((s) => s[0] !== null && s[0] !== undefined)
      .map(([at, bn, bb, an, ab]) => ({
        at: Number(at),
        before: { records: Number(bn), bytes: Number(bb) },
        after: { records: Number(an), bytes: Number(ab) },
      }))
    return passes.length === 0 ? undefined : sum(passes)
  }

  /** Stop the background passes (one under way stops at its next step). */
  close(): void {
    this.closed = true
    clearInterval(this.timer)
    this.timer = undefined
    this.tracked.clear()
  }

  /** A pass of one partition: script steps until one answers that the pass ended. */
  private async pass(meta: TopicMeta, p: number): Promise<PartitionPass> {
    const keys = [
      this.keys.stream(meta.name, p),
      this.keys.end(meta.name, p),
      this.keys.start(meta.name, p),
      this.keys.compactIndex(meta.name, p),
      this.keys.compactTombstones(meta.name, p),
      this.keys.compactState(meta.name, p),
    ] as const
    const keep = meta.tombstoneRetentionMs ?? DEFAULT_TOMBSTONE_RETENTION_MS
    for (;;) {
      let r: Awaited<ReturnType<Scripts['call']>>
      try {
        r = await this.scripts.call('compact', keys, [this.step, keep])
      } catch (e) {
        if (e instanceof Error && e.message.startsWith('NOTOPIC'))
          throw new TopicNotFoundError(`Topic "${meta.name}" (partition ${p}) does not exist`)
        throw redisError(`Compaction of "${meta.name}" partition ${p} failed`, e)
      }
      const [done, records, bytes, at, recordsBefore, bytesBefore] = (r as unknown[]).map(Number)
      if (done === 1)
        return {
          at: at as number,
          before: { records: recordsBefore as number, bytes: bytesBefore as number },
          after: { records: records as number, bytes: bytes as number },
        }
      if (this.closed) throw redisError(`Compaction of "${meta.name}" partition ${p}`, new Error('the store closed'))
    }
  }

  /** The background passes: each tracked topic's partitions whose lease this process takes. */
  private async tick(): Promise<void> {
    if (this.ticking) return
    this.ticking = true
    try {
      for (const topic of [...this.tracked]) {
        if (this.closed) return
        let meta: TopicMeta
        try {
          meta = await this.meta(topic)
        } catch (e) {
          if (e instanceof TopicNotFoundError) this.tracked.delete(topic)
          continue
        }
        if (!meta.compact) {
          this.tracked.delete(topic)
          continue
        }
        for (let p = 0; p < meta.partitions && !this.closed; p++) {
          try {
            const got = await this.client.set(this.keys.compactLease(topic, p), this.token, 'PX', this.everyMs, 'NX')
            if (got === 'OK') await this.pass(meta, p)
          } catch (e) {
            // In the background: the next period tries again (a failover, a topic deleted meanwhile).
            if (!this.closed && !(e instanceof TopicNotFoundError))
              this.failed?.(
                { topic, partition: p },
                `twainmq: a background compaction pass over "${topic}" partition ${p} failed`,
                e,
              )
          }
        }
      }
    } finally {
      this.ticking = false
    }
  }
}

/** Passes of several partitions as one: counts added, `at` the latest. */
function sum(passes: readonly PartitionPass[]): CompactionStats {
  const out: CompactionStats = { at: 0, before: { records: 0, bytes: 0 }, after: { records: 0, bytes: 0 } }
  for (const p of passes) {
    out.at = Math.max(out.at, p.at)
    out.before.records += p.before.records
    out.before.bytes += p.before.bytes
    out.after.records += p.after.records
    out.after.bytes += p.after.bytes
  }
  return out
}
