import type { TopicPartition } from '../backends/assign.js'
import type { OpenOptions } from '../core/types.js'
import type { TailFrom } from '../stream/tail-source.js'

/** Options of `twain.tail()`. */
export interface TailOptions {
  /** Where to start: `'start'`, `'end'`, `{ offset }` (one for all partitions, or per partition) or `{ time }`. @default 'end' */
  from?: TailFrom
  /** Read only these partitions. @default all */
  partitions?: number[]
  /** Skip messages this instance produced (same `clientId`). @default false */
  skipOwn?: boolean
  /** Aborting ends the stream with `AbortError`. */
  signal?: AbortSignal
}

/** Options of `twain.history()`. */
export interface HistoryOptions {
  /** Read only this partition. @default every partition, in partition order */
  partition?: number
  /** First offset (or first timestamp) to read. @default the start of each partition */
  from?: number | { time: Date | number }
  /** Stop before this offset (exclusive, like `end`). @default the end when the read starts */
  to?: number
  /** Read at most this many messages. @default unlimited */
  limit?: number
  /** Newest first; with `limit: n`, the n most recent (across partitions: by timestamp). @default false */
  reverse?: boolean
  signal?: AbortSignal
}

/** What `describeGroup` reports. `committed` is the partition's start where nothing is committed. */
export interface GroupDescription {
  group: string
  /** `kind`: `'processor'` for a member made by `twain.processor()`, else `'consumer'`. */
  members: Array<{ id: string; name: string; kind: 'processor' | 'consumer'; assignments: TopicPartition[] }>
  /**
   * Per partition: `lag`, the messages not yet committed (`end - committed`); `lagMs`, the age of
   * the oldest of them (now minus the timestamp of the message at the committed offset; 0 when
   * caught up); `pending` (shared groups), entries delivered and not yet acknowledged.
   */
  topics: Array<{
    topic: string
    partition: number
    committed: number
    end: number
    lag: number
    lagMs: number
    pending?: number
  }>
}

/** Extra options of the file backend (given with a Redis target, `open()` refuses them with `InvalidArgumentError`). */
export interface FileOpenOptions extends OpenOptions {
  /** Roll to a new segment when the active one would exceed this many bytes. @default 67108864 (64 MiB) */
  segmentBytes?: number
  /** Safety-net poll interval of tails in ms. @default 250 */
  pollMs?: number
  /**
   * Most segment and index files the file backend keeps open at once (an integer ≥ 8). Readers and
   * appenders keep their files open between uses; beyond this many, the least recently used close
   * theirs and reopen on their next use, so a topic of 10,000 partitions can be written, tailed and
   * consumed under `ulimit -n 1024`. Each `open()` has its own cap; a few more fds are used
   * transiently (locks, index look-ups, watchers).
   * @default 512
   */
  maxOpenFiles?: number
}
