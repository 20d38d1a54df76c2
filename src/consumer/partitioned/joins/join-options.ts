import { InvalidArgumentError } from '../../../core/errors.js'
import { checkTopicName } from '../../../core/names.js'
import type { Key } from '../../../core/types.js'
import type { ProcessorMessage } from '../processor-message.js'
import type { ProcessorOptions } from '../processor.js'

/** The processors' options a join passes on (README "Exactly-once processing"): no others, since the rest would break it (`maxDeliveries` would drop records, `deadLetter` and `state` are the join's). */
const PROCESSOR_OPTIONS = [
  'from',
  'maxInFlight',
  'stallWarningMs',
  'commitIntervalMs',
  'sessionTimeoutMs',
  'heartbeatIntervalMs',
  'drainTimeoutMs',
  'signal',
] as const

/** The options of the join's two processors (README "Exactly-once processing"); `from` applies to the input topics (the copier). */
export type JoinProcessorOptions = Pick<ProcessorOptions, (typeof PROCESSOR_OPTIONS)[number]>

/** Options of `joinStreams()` (README "Stream–stream joins"). */
export interface JoinOptions<L, R, J, K extends Key> {
  /** The left topic. @default required */
  left: string
  /** The right topic: as many partitions as `left`, the same key type. @default required */
  right: string
  /**
   * The join's name: its processors' groups (`<group>` joins, `<group>-in` copies both topics
   * into the join topic `<group>-join`), and its state's changelog, `<group>-join-changelog`.
   * @default required
   */
  group: string
  /** Two records of a key pair when their event times are at most this far apart (ms). @default required */
  withinMs: number
  /** The topic each pair's `join()` value is sent to, under their key (same key type as the inputs), timestamped with the later of the two. @default required */
  to: string
  /**
   * A pair's value, not `undefined` (a pure function of its arguments, which it must not change:
   * it runs again for a record processed again). @default required
   */
  join: (left: L, right: R, pair: { key: K; leftTime: number; rightTime: number }) => J
  /** How far each side's event time may go back: its watermark is its largest event time seen less this. @default 0 */
  latenessMs?: number
  /** A left record's event time, ms since the epoch. @default its `timestamp` */
  leftTime?: (m: ProcessorMessage<L, K>) => number
  /** A right record's event time. @default its `timestamp` */
  rightTime?: (m: ProcessorMessage<R, K>) => number
  /**
   * Topic a late record (below its side's watermark) is sent to: its join-topic copy, with the
   * header `x-twain-join: left | right` (same key type as the inputs). @default none: it is dropped
   */
  lateTo?: string
  /** Called with each late record (its join-topic copy: read it, do not settle it) and its side. @default none */
  onLate?: (m: ProcessorMessage<L | R, K>, side: 'left' | 'right') => void
  /** Options of both processors (`sessionTimeoutMs`, `from`, `maxInFlight`, `signal`, …). @default a processor's */
  processors?: JoinProcessorOptions
}

/** A topic option's name, checked (`InvalidArgumentError` naming the option). */
function topicOption(option: string, name: unknown): string {
  try {
    return checkTopicName(name)
  } catch (e) {
    throw new InvalidArgumentError(`joinStreams() ${option}: ${(e as Error).message}`)
  }
}

/** Check `joinStreams()` options: each bad one refused by name, with its value; topics that would feed the join back into itself refused. */
export function checkJoinOptions<L, R, J, K extends Key>(o: JoinOptions<L, R, J, K>): void {
  if (typeof o !== 'object' || o === null)
    throw new InvalidArgumentError(`joinStreams() needs options, got ${String(o)}`)
  if (typeof o.group !== 'string' || o.group === '')
    throw new InvalidArgumentError(
      `joinStreams() group must be a name, got ${JSON.stringify(o.group) ?? String(o.group)}`,
    )
  try {
    checkTopicName(`${o.group}-join-changelog`)
  } catch {
    throw new InvalidArgumentError(
      `joinStreams() group ${JSON.stringify(o.group)} cannot name topics: use 1-180 of A-Z a-z 0-9 _ . -, not starting with "__"`,
    )
  }
  const topics: Record<string, string> = { left: topicOption('left', o.left), right: topicOption('right', o.right) }
  topics.to = topicOption('to', o.to)
  if (o.lateTo !== undefined) topics.lateTo = topicOption('lateTo', o.lateTo)
  const joinTopic = `${o.group}-join`
  for (const [option, name] of Object.entries(topics))
    if (name === joinTopic)
      throw new InvalidArgumentError(`joinStreams() ${option} is "${name}", the join's own topic of group "${o.group}"`)
  for (const [a, b] of [
    ['left', 'right'],
    ['to', 'left'],
    ['to', 'right'],
    ['lateTo', 'left'],
    ['lateTo', 'right'],
  ] as const)
    if (topics[a] !== undefined && topics[a] === topics[b])
      throw new InvalidArgumentError(
        `joinStreams() ${a} and ${b} are both "${topics[a]}": the join would read what it writes, or join a topic with itself`,
      )
  const w = o.withinMs
  if (typeof w !== 'number' || !Number.isSafeInteger(w) || w < 0)
    throw new InvalidArgumentError(`joinStreams() withinMs must be a non-negative integer (ms), got ${String(w)}`)
  const l = o.latenessMs ?? 0
  if (typeof l !== 'number' || !Number.isSafeInteger(l) || l < 0)
    throw new InvalidArgumentError(`joinStreams() latenessMs must be a non-negative integer, got ${String(l)}`)
  for (const f of ['join', 'leftTime', 'rightTime', 'onLate'] as const) {
    const v = o[f] as unknown
    if ((v !== undefined || f === 'join') && typeof v !== 'function')
      throw new InvalidArgumentError(`joinStreams() ${f} must be a function, got ${typeof v}`)
  }
  processorOptions(o.processors)
}

/** The processors' options, checked: only `PROCESSOR_OPTIONS` (any other is refused by name). */
export function processorOptions(given: JoinProcessorOptions | undefined): JoinProcessorOptions {
  if (given === undefined) return {}
  if (typeof given !== 'object' || given === null)
    throw new InvalidArgumentError(`joinStreams() processors must be an object, got ${String(given)}`)
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(given)) {
    if (!(PROCESSOR_OPTIONS as readonly string[]).includes(k))
      throw new InvalidArgumentError(
        `joinStreams() processors.${k} is not an option a join passes on: use ${PROCESSOR_OPTIONS.join(', ')}`,
      )
    if (v !== undefined) out[k] = v
  }
  return out as JoinProcessorOptions
}
