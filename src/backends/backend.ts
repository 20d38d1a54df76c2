import type { LogRollbackError } from '../core/errors.js'
import type { KeyType, Message, Retention } from '../core/types.js'
import type { GroupAdmin } from './group-admin.js'
import type { GroupCoordinator } from './group.js'
import type { MessageFactory, RawBudget, RawRecord, RecordInput } from './record.js'
import type { SharedGroups } from './shared.js'

/** A topic's stored configuration. */
export interface TopicMeta {
  name: string
  partitions: number
  keyType: KeyType
  messageTypes: string[]
  retention: Retention
  maxMessageBytes: number
  /** ms since epoch. */
  createdAt: number
  /** Application attributes (`CreateTopicOptions.attributes`); absent when none were given. */
  attributes?: Record<string, string>
  /** Keep at least the latest record of every key; older ones are removed in the background. Default false. */
  compact?: boolean
  /** How long a tombstone (null value) of a compacted topic is kept, in ms. Default 86_400_000. */
  tombstoneRetentionMs?: number
}

/** What one compaction pass over a topic did (`TopicStore.compact`). */
export interface CompactionStats {
  /** When the pass ended (ms since the epoch). */
  at: number
  before: { records: number; bytes: number }
  after: { records: number; bytes: number }
}

/** Options of one {@link TopicStore.append}. */
export interface AppendOptions {
  /**
   * Compare-and-append: write only if the partition's end offset is this now (atomically with the
   * append, across processes), else reject with `AppendConflictError` carrying the end found and
   * write nothing. Undefined (the default): append at whatever the end is.
   */
  expectedEnd?: number
}

/**
 * One partition's next batch, encoded as its records are added (the producer's path for plain
 * text sends: no record objects, one pass). Records have text values, no type and no headers, and
 * share the timestamp given to `start`.
 */
export interface TextFrame {
  /** Records added since `start`. */
  readonly count: number
  /** Bytes of the frame so far. */
  readonly bytes: number
  /** Empty the frame; its records will have this timestamp (ms since the epoch). */
  start(timestamp: number): void
  /**
   * Add a record: the key as `RecordInput.key` gives it (`keyBytes` stored bytes), a text value,
   * and an idempotency id (the record's one header, `ID_HEADER`; a frame with one is appended with
   * `TextFrames.appendIdempotent`).
   */
  add(key: Buffer | number, keyBytes: number, value: string, id?: string): void
}

/**
 * The text-frame capability of a store ({@link TopicStore.frames}): plain text sends encoded
 * straight into a partition's next batch, the producer's fast path where a store stores frames
 * (the file backend's native topics). A send reaches the store through `append` (records) or
 * through this (frames); nothing else.
 */
export interface TextFrames {
  /**
   * An empty frame for `append`, or undefined when `topic` is not stored in frames (a topic of
   * another format under the same store). One per flush and partition; it may be reused (`start`)
   * once the append it was given to has settled.
   */
  frame(topic: string, producerId: string): TextFrame | undefined
  /** Append the frame's records to a partition as one batch, as `TopicStore.append` does (same guarantees and errors); resolves with the first offset. */
  append(topic: string, partition: number, frame: TextFrame): Promise<number>
  /**
   * `append` done now, synchronously, when that needs no waiting (nothing of this process queued on
   * the partition, no sync awaited, its lock at hand): the first offset, or undefined when it
   * cannot go now (then `append`). Throws what `append` rejects with.
   */
  appendNow(topic: string, partition: number, frame: TextFrame): number | undefined
  /** `TopicStore.appendIdempotent` of the frame's records (some added with an id), as an `IdempotentOutcome`. */
  appendIdempotent(topic: string, partition: number, frame: TextFrame, windowMs: number): Promise<IdempotentOutcome>
}

/** Where a processor's outputs come from (`TopicStore.appendSourced`). */
export interface OutputSource {
  /** The processor's group. */
  group: string
  /** The input partition. */
  topic: string
  partition: number
  /**
   * The input topic's creation time (`TopicMeta.createdAt`): a topic deleted and created again is
   * another source, whose offsets start over.
   */
  incarnation: number
  /** The lease epoch of the member writing (its fencing token). */
  epoch: number
  /** The input partition's committed offset as the writer knows it: outputs of inputs below it are forgotten. */
  committed: number
  /**
   * When the writer's lease lapses unless it heartbeats again (ms since the epoch, the clock the
   * group's sessions are judged by): a call the store handles later is fenced. `Infinity`: no check.
   */
  deadline: number
}

/** An output's place among its source's: the input's offset and the output's sequence number among that input's outputs. */
export interface SourcePosition {
  offset: number
  seq: number
}

/** One record's outcome in {@link TopicStore.appendIdempotent}. */
export interface IdempotentResult {
  /** Where the record is: stored by this call, or (a duplicate) where its id's record was stored before. */
  offset: number
  /** Its id was stored within the window before (by any process, or earlier in this call): nothing was written for it. */
  duplicate: boolean
}

/**
 * `IdempotentResult`s without an object per record (the producer's frame path resolves its sends
 * from it directly): record `i` went to `base + ~slots[i]` when `slots[i]` is negative (written by
 * this call, unless `repeats` has `i`: a duplicate of an earlier record of the call), else it is a
 * duplicate of the record at offset `slots[i]`.
 */
export interface IdempotentOutcome {
  base: number
  slots: readonly number[]
  repeats: ReadonlySet<number> | undefined
}

/** First retained and next-to-be-written offset of a partition. */
export interface PartitionOffsets {
  partition: number
  start: number
  end: number
}

/**
 * Reads one partition forward. Not safe for concurrent `read` calls: one consumer drives it.
 */
export interface PartitionReader {
  readonly topic: string
  readonly partition: number
  /** The next offset `read` will return (after the messages it has returned). */
  readonly next: number
  /**
   * Up to `max` messages from `next` on, in offset order, or `[]` when none are available now.
   * @remarks Never blocks waiting for new data: callers combine it with {@link Backend.watch}.
   * Offsets below the partition's start resume at the start, also when a trim moves the start past
   * a reader that is already reading. A reader may build its messages with `make` (a consumer
   * group's message class); one that does builds every message of the read with it, one that does
   * not returns plain messages (the caller then copies them).
   */
  read(max: number, make?: MessageFactory): Promise<Message[]>
  /**
   * Like `read`, without decoding keys or values (the gateway's catch-up path copies stored JSON
   * and text bytes into responses as they are; a store that keeps values in another form gives them
   * encoded as the producer would store them). The records and their bytes may be the reader's own
   * (reused): they are valid only until this reader's next call. With a `budget` (see
   * {@link RawBudget}; default none) the read stops before the first record it has no room for (the
   * next read starts there) and sets `budget.full`; a full budget gives `[]`.
   */
  readRaw(max: number, budget?: RawBudget): Promise<RawRecord[]>
  /** Continue from `offset` at the next `read`. */
  seek(offset: number): void
  /**
   * Throw if what follows `next` is damage rather than the end of the data (a file partition's end
   * offset stops before damage; a store that cannot tell, or keeps no checksums, resolves). A history
   * that read a partition to its end calls it, so damage ends the history with an error instead of
   * a quietly short result.
   */
  verifyEnd(): Promise<void>
  /**
   * The rollback this reader found and went back over since the last call, once: the partition's
   * log moved below offsets it had returned, so `next` moved back to the first of them and `read`
   * returns the records now stored there (decision 112). Its caller reports it. Undefined when
   * none (always, for a store whose log never moves back, such as a directory).
   */
  takeRollback(): LogRollbackError | undefined
  /** Release file handles / connections. Idempotent. */
  close(): Promise<void>
}

/**
 * The data plane of a store: topics, appends, readers, watches, trimming. A backend is one (see
 * {@link Backend}); the file backend also hands topics of other on-disk formats (Python TwainMQ
 * 0.1.9 roots) to such a store.
 *
 * @remarks
 * - Offsets are dense per partition (0, 1, 2, …) and assigned atomically by `append`; a compacted
 *   topic's (`TopicMeta.compact`) may have gaps once older records of a key are removed, which
 *   every reader steps over (offsets never change).
 * - `append` may be called from many processes at once; each call's records get consecutive
 *   offsets and are never interleaved with another call's.
 * - Every method throws errors of the `TwainError` tree (`TopicNotFoundError`, `BackendError`, …).
 */
export interface TopicStore {
  /** Create a topic atomically. @throws `TopicExistsError` when it exists. */
  createTopic(meta: TopicMeta): Promise<void>
  /** Delete a topic and all its data. @throws `TopicNotFoundError` when absent. */
  deleteTopic(name: string): Promise<void>
  /** Names of user topics (no internal `__` topics), sorted. */
  listTopics(): Promise<string[]>
  /** A topic's configuration. @throws `TopicNotFoundError` when absent. */
  getTopic(name: string): Promise<TopicMeta>
  /** Start and end offsets of every partition. @throws `TopicNotFoundError` when absent. */
  offsets(topic: string): Promise<PartitionOffsets[]>
  /**
   * The end offsets of every partition (index = partition) as of this call: every append that
   * resolved before the call is counted, and no append this instance issues after it. A backend
   * answers synchronously where it can (the file backend reads them now) or with a promise whose
   * request is ordered before this instance's later appends (Redis: one command connection, and
   * appends wait until the request is written). `undefined` when the topic is missing (the caller's
   * asynchronous path reports it). Lets a tail `from: 'end'` start exactly where `tail()` was called.
   */
  endOffsetsSnapshot(topic: string): number[] | Promise<number[]> | undefined
  /**
   * Append records to a partition as one batch; resolves with the first record's offset.
   * @throws `TopicNotFoundError`, `InvalidArgumentError` (no such partition), `BackendError`
   * (`ERR_DISK_FULL` when nothing could be written for lack of space), `TimeoutError` (a lock),
   * `AppendConflictError` (`options.expectedEnd` is not the end).
   */
  append(
    topic: string,
    partition: number,
    records: readonly RecordInput[],
    producerId: string,
    options?: AppendOptions,
  ): Promise<number>
  /**
   * `append` for records of which some carry an idempotency id (the `ID_HEADER` header of
   * `record.ts`; `send(…, { id })`). A record whose id this partition stored within the last
   * `windowMs` milliseconds (the store's clock: the machine's for a directory, the server's for
   * Redis), by any process, before this call or earlier in it, is not stored again: it gets that
   * record's offset. The others are stored as `append` stores them, in order, with consecutive
   * offsets, and their ids are remembered for at least the window they were stored with, and at
   * least the partition's last `MAX_REMEMBERED_IDS` of them (up to twice as many; the oldest are
   * forgotten first, so memory stays bounded). Atomic with the append: no
   * interleaving of processes, crashes or retried calls stores an id twice within its window.
   * @throws what `append` throws; `InvalidArgumentError` where the topic's format keeps no headers.
   */
  appendIdempotent(
    topic: string,
    partition: number,
    records: readonly RecordInput[],
    producerId: string,
    windowMs: number,
  ): Promise<IdempotentResult[]>
  /**
   * Append a processor's outputs (`twain.processor`) to one output partition, exactly once
   * (docs/format.md, "Exactly-once outputs"). Every record is an output of `source` (an input
   * partition of a group, written by a member holding its lease at `source.epoch`) at its
   * `positions[i]` (the input's offset and the output's sequence number among that input's
   * outputs). Atomically with the append, the partition keeps per source the highest lease epoch
   * stored and the positions of the outputs of inputs at or past the source's committed offset:
   * an output whose position is remembered is not stored again (its result is the stored offset,
   * `duplicate: true`); the others are stored as `append` stores them, in order.
   * @throws `FencedError` (nothing stored) when a writer with a higher lease epoch stored outputs
   * here, or when the store's clock is past `source.deadline`; what `append` throws.
   */
  appendSourced(
    topic: string,
    partition: number,
    records: readonly RecordInput[],
    producerId: string,
    source: OutputSource,
    positions: readonly SourcePosition[],
  ): Promise<IdempotentResult[]>
  /**
   * The text-frame capability, where the store has one (the file backend); absent elsewhere (the
   * producer then sends records through `append`).
   */
  readonly frames?: TextFrames
  /** A forward reader of one partition positioned at `from`. @throws `TopicNotFoundError`, `InvalidArgumentError`. */
  openReader(topic: string, partition: number, from: number): Promise<PartitionReader>
  /** The offset of the first message with `timestamp >= time` (the end offset if none). */
  offsetForTime(topic: string, partition: number, time: number): Promise<number>
  /**
   * Note that `topic` was used at `at` (ms since the epoch), so that idle expiry is the same for
   * every process of the store (the gateway's sliding TTLs). The last call wins; a topic that does
   * not exist is ignored. A store with no place to keep it (a Python TwainMQ root) ignores it.
   */
  markAccess(topic: string, at: number): Promise<void>
  /** The time last given to `markAccess` by any process; undefined when none (or no such topic, or a store that keeps none). */
  lastAccess(topic: string): Promise<number | undefined>
  /**
   * Call `onData` (possibly spuriously) when a partition may have new data: appends from this or
   * any other process, or a periodic safety-net tick. Returns the unsubscribe function.
   * A non-`persistent` watch does not keep the process alive.
   */
  watch(topic: string, partition: number, onData: () => void, persistent?: boolean): () => void
  /**
   * Remove messages with offsets below `before` (exactly: the partition then starts at `before`);
   * resolves with how many were removed. @throws `InvalidArgumentError` where the format cannot trim.
   */
  trimBefore(topic: string, partition: number, before: number): Promise<number>
  /** Apply the topic's retention limits now; resolves with how many messages were removed. */
  applyRetention(topic: string): Promise<number>
  /** Runs one compaction pass over every partition of a compacted topic now (InvalidArgumentError if not compacted). */
  compact(topic: string): Promise<CompactionStats>
  /** The stats of the last pass, or undefined when none has run. */
  lastCompaction(topic: string): Promise<CompactionStats | undefined>
  /**
   * Release every handle, watcher and connection. Idempotent. Afterwards `ping()` is false and every
   * other call (groups included) fails at once with a non-retriable `ClosedError`.
   */
  close(): Promise<void>
}

/**
 * The contract every storage backend implements: a {@link TopicStore} plus consumer-group
 * coordination. The consumer core, streams and the `Twain` facade use only this; a backend never
 * imports them. Group coordination (membership, leases with fencing epochs, commits) is the
 * `groups` part; the consumer core that drives it is backend-agnostic. Group administration is the
 * `admin` part, one contract for both group modes (`group-admin.ts`).
 */
export interface Backend extends TopicStore {
  /** The backend's name, as errors and the CLI show it: `'file'` and `'redis'` here; another backend names itself. */
  readonly kind: string
  /** Partitioned consumer-group coordination (what a member drives). */
  readonly groups: GroupCoordinator
  /** Consumer-group administration (describe, list, reset, delete, commits per topic), both modes. */
  readonly admin: GroupAdmin
  /**
   * Shared (competing-consumer) groups, `mode: 'shared'`: an optional capability. Only the Redis
   * backend has it (Redis consumer groups on each partition stream); `consumer()` refuses shared mode
   * on a backend without it.
   * @remarks See {@link SharedGroups}: per-entry acknowledgements, claims of entries idle longer than
   * `claimAfterMs`, delivery counts kept by the backend.
   */
  readonly shared?: SharedGroups
  /** Whether the backend is reachable. */
  ping(): Promise<boolean>
}
