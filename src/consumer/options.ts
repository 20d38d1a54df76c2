import { InvalidArgumentError } from '../core/errors.js'
import { checkGroupName, checkInt, checkKnownKeys, checkTopicName } from '../core/names.js'

/** Options of `twain.consumer()`. */
export interface ConsumerOptions {
  /** The consumer group. Required: there is no default. */
  group: string
  /**
   * Member name; stable names let a restarted member recover its own pending entries (shared mode).
   * One live consumer per name and group: a second one in the same instance throws
   * `InvalidArgumentError`, and on Redis a shared member of another process is refused while the
   * name's member is live. @default random
   */
  name?: string
  /**
   * Where to start where the group has no commit: `'start'` (TwainMQ's default) or `'end'`, the
   * partition's end when `consumer()` was called (so a message sent right after it is delivered,
   * as for `tail()`). A partitioned member commits that position as soon as it owns the
   * partition; a shared member creates the group there. @default 'start'
   */
  from?: 'start' | 'end'
  /**
   * `'partitioned'` (both backends) or `'shared'` (Redis competing consumers: every member reads every
   * partition, per-message acks; `twain.consumer()` returns a `SharedConsumer`). @default 'partitioned'
   */
  mode?: 'partitioned' | 'shared'
  /** Most messages fetched but not yet acked; fetching pauses beyond it. @default 1000 */
  maxInFlight?: number
  /**
   * How long the member may hold `maxInFlight` messages, acking or terming none of them, while the
   * application waits for more (an iteration waiting, or `poll()` finding nothing) before it emits
   * `'error'` with a `StalledError` (`code: 'ERR_STALLED'`): nothing more can be fetched until some
   * are settled (README, "Holding messages"). Once per stall; a settlement ends it. An integer
   * 1..86400000, or `Infinity` for no warning (`0` is refused: it would not mean "off").
   * @default 30000
   * @example
   * ```ts
   * twain.consumer('orders', { group: 'billing', maxInFlight: 5000, stallWarningMs: 120_000 })
   * ```
   */
  stallWarningMs?: number
  /** How often acked offsets are committed (shared mode: how often waiting acks are sent as XACKs, at the latest). @default 1000 */
  commitIntervalMs?: number
  /** A member silent this long is dropped and its partitions move. @default 10000 */
  sessionTimeoutMs?: number
  /** How often the member heartbeats. @default sessionTimeoutMs / 3 */
  heartbeatIntervalMs?: number
  /**
   * Shared mode: entries a member held this long without refreshing them (its process died or
   * stalled) are claimed by live members; live members refresh theirs every third of it. Use the same
   * value on every member; `0` makes every pending entry claimable at once. @default 30000
   */
  claimAfterMs?: number
  /** A message delivered more than this many times is `term`ed automatically. @default unlimited */
  maxDeliveries?: number
  /**
   * Topic that `term`ed messages go to (created with the source's key type and one partition if
   * missing), written as its producer writes: the partition its partitioner picks for the key, its
   * key-type and `maxMessageBytes` checks; the message keeps its type and value as read.
   * @default none: `term` drops the message
   */
  deadLetter?: string
  /** How long `close()` and a revoked partition wait for in-flight messages to be acked. @default sessionTimeoutMs */
  drainTimeoutMs?: number
  /** Aborting closes the consumer (leaves the group). @default none */
  signal?: AbortSignal
}

export interface ResolvedConsumerOptions {
  group: string
  name: string | undefined
  from: 'start' | 'end'
  mode: 'partitioned' | 'shared'
  maxInFlight: number
  /** `Infinity`: no stall warning. */
  stallWarningMs: number
  commitIntervalMs: number
  sessionTimeoutMs: number
  heartbeatIntervalMs: number
  claimAfterMs: number
  maxDeliveries: number | undefined
  deadLetter: string | undefined
  drainTimeoutMs: number
  signal: AbortSignal | undefined
}

/** Check every option; throws `InvalidArgumentError` naming the bad one. */
const CONSUMER_KEYS = [
  'group',
  'name',
  'from',
  'mode',
  'maxInFlight',
  'stallWarningMs',
  'commitIntervalMs',
  'sessionTimeoutMs',
  'heartbeatIntervalMs',
  'claimAfterMs',
  'maxDeliveries',
  'deadLetter',
  'drainTimeoutMs',
  'signal',
]

export function resolveConsumerOptions(o: ConsumerOptions): ResolvedConsumerOptions {
  if (o === null || typeof o !== 'object')
    throw new InvalidArgumentError(`consumer() needs options with a group, got ${JSON.stringify(o)}`)
  checkKnownKeys('consumer()', o, CONSUMER_KEYS)
  const group = checkGroupName(o.group)
  const from = o.from ?? 'start'
  if (from !== 'start' && from !== 'end')
    throw new InvalidArgumentError(`from must be 'start' or 'end', got ${JSON.stringify(from)}`)
  const mode = o.mode ?? 'partitioned'
  if (mode !== 'partitioned' && mode !== 'shared')
    throw new InvalidArgumentError(`mode must be 'partitioned' or 'shared', got ${JSON.stringify(mode)}`)
  if (o.name !== undefined && (typeof o.name !== 'string' || !/^[A-Za-z0-9_.-]{1,200}$/.test(o.name))) {
    throw new InvalidArgumentError(`Member name ${JSON.stringify(o.name)} is invalid: use 1-200 of A-Z a-z 0-9 _ . -`)
  }
  const sessionTimeoutMs = checkInt('sessionTimeoutMs', o.sessionTimeoutMs ?? 10_000, 100, 3_600_000)
  const heartbeatIntervalMs = checkInt(
    'heartbeatIntervalMs',
    o.heartbeatIntervalMs ?? Math.max(30, Math.floor(sessionTimeoutMs / 3)),
    10,
    sessionTimeoutMs,
  )
  return {
    group,
    name: o.name,
    from,
    mode,
    maxInFlight: checkInt('maxInFlight', o.maxInFlight ?? 1000, 1, 10_000_000),
    stallWarningMs: checkStallWarningMs(o.stallWarningMs),
    commitIntervalMs: checkInt('commitIntervalMs', o.commitIntervalMs ?? 1000, 1, 3_600_000),
    sessionTimeoutMs,
    heartbeatIntervalMs,
    claimAfterMs: checkInt('claimAfterMs', o.claimAfterMs ?? 30_000, 0, 86_400_000),
    maxDeliveries: o.maxDeliveries === undefined ? undefined : checkInt('maxDeliveries', o.maxDeliveries, 1, 1_000_000),
    deadLetter: o.deadLetter === undefined ? undefined : checkTopicName(o.deadLetter),
    drainTimeoutMs: checkInt('drainTimeoutMs', o.drainTimeoutMs ?? sessionTimeoutMs, 0, 3_600_000),
    signal: o.signal,
  }
}

/** `stallWarningMs`: an integer 1..86400000, or `Infinity` (no warning); `0` is refused, not read as "off". */
function checkStallWarningMs(value: unknown): number {
  if (value === undefined) return 30_000
  if (value === Infinity || (Number.isInteger(value) && (value as number) >= 1 && (value as number) <= 86_400_000))
    return value as number
  throw new InvalidArgumentError(
    `stallWarningMs must be an integer 1..86400000 or Infinity (no stall warning), got ${typeof value === 'string' ? JSON.stringify(value) : String(value)}`,
  )
}
