/**
 * Shared fixtures of the groups-*.test.ts files (not a test file): a fresh store per test on each
 * store kind (test/conformance/backends.ts), small group timings, and helpers that send, poll and
 * iterate.
 */
import { afterEach, beforeEach, expect } from 'vitest'
import {
  InvalidArgumentError,
  type Consumer,
  type ConsumerOptions,
  type FileOpenOptions,
  type GroupMessage,
  type Twain,
} from '../../../src/index.js'
import type { BackendKind, Store } from '../../conformance/backends.js'
import { until } from '../../helpers/wait.js'
import { pollN } from '../../helpers/poll.js'

/** Small timings so the suites stay fast. */
export const FAST = {
  sessionTimeoutMs: 2000,
  heartbeatIntervalMs: 200,
  commitIntervalMs: 100,
} satisfies Partial<ConsumerOptions>

let store: Store | undefined
let current: BackendKind | undefined
const others: Twain[] = []
/** The current test's store (a live binding: set by `useGroupStore`'s beforeEach). */
export let twain: Twain

/**
 * Call once at the top of a kind's describe block: starts what the kind needs (a private
 * redis-server for the block), and each test gets a fresh store (a new directory, or a new key
 * prefix) with a `twain` open on it; everything opened on it is closed after the test.
 */
export function useGroupStore(kind: BackendKind): void {
  kind.hooks()
  beforeEach(async () => {
    current = kind
    store = kind.store()
    twain = await store.open()
  })
  afterEach(async () => {
    await Promise.all([twain, ...others.splice(0)].map((t) => t.close()))
    store = undefined
  })
}

/** Another instance on the current test's store (closed after the test), opened with `options`. */
export async function openOther(options?: FileOpenOptions): Promise<Twain> {
  if (!store) throw new Error('openOther() outside a test: call useGroupStore(kind) in the describe block')
  const t = await store.open(options)
  others.push(t)
  return t
}

/** How many reads of this process (file kinds) or server (Redis) wait for new data now (`BackendKind.waitingReads`). */
export function waitingReads(): Promise<number> {
  if (!current) throw new Error('waitingReads() outside a test: call useGroupStore(kind) in the describe block')
  return current.waitingReads()
}

/** Send `n` string messages to one partition; values `${prefix}${i}`. */
export async function fill(topic: string, partition: number, n: number, prefix = `p${partition}-`): Promise<void> {
  if (n === 0) return
  await twain
    .producer<string>(topic)
    .sendBatch(Array.from({ length: n }, (_, i) => ({ key: i, value: `${prefix}${i}`, partition })))
}

/** The next `n` messages of a `for await` view (the view is ended with break). */
export async function iterN<V>(
  c: Consumer<V>,
  n: number,
  onMessage?: (m: GroupMessage<V>) => void,
): Promise<GroupMessage<V>[]> {
  const out: GroupMessage<V>[] = []
  if (n === 0) return out
  for await (const m of c) {
    out.push(m)
    onMessage?.(m)
    if (out.length >= n) break
  }
  return out
}

/** The committed offsets of `group` on `topic`, by partition. */
export async function committed(group: string, topic: string): Promise<number[]> {
  const d = await twain.describeGroup(group)
  return d.topics
    .filter((t) => t.topic === topic)
    .sort((a, b) => a.partition - b.partition)
    .map((t) => t.committed)
}

/** Until `member` (asked to commit at each check) has committed `group`'s partition 0 of `topic` up to `offset`. */
export async function untilCommitted(
  member: { commit(): Promise<void> },
  group: string,
  topic: string,
  offset: number,
  what = 'the commit',
): Promise<void> {
  await until(async () => (await member.commit(), (await committed(group, topic))[0] === offset), 5000, what)
}

/** Until `c` owns exactly `n` partitions. */
export async function waitAssigned(c: Consumer, n: number, ms = 3000): Promise<void> {
  await until(() => c.assignments().length === n, ms, `${n} assigned partitions (have ${c.assignments().length})`)
}

/** `topic/partition` strings, sorted (to compare sets of partitions). */
export const sortTp = (xs: Array<{ topic: string; partition: number }>): string[] =>
  xs.map((x) => `${x.topic}/${x.partition}`).sort()

/**
 * `m.term(reason)` on a store without headers (twainmq-v1): its dead letter cannot be written (the
 * `x-` headers have no place in the TwainMQ line), so the write fails like any failing dead-letter
 * write: an `InvalidArgumentError` on 'error', and the message comes back un-acked.
 */
export async function expectTermRefused<V>(c: Consumer<V>, m: GroupMessage<V>, reason?: string): Promise<void> {
  const errors: Error[] = []
  const off = c.on('error', (e) => errors.push(e))
  const { offset, deliveryCount } = m
  m.term(reason)
  await until(() => errors.length > 0, 3000, "the dead-letter write's 'error'")
  off()
  expect(errors[0]!.message).toMatch(/^Dead-letter write of /)
  expect(errors[0]!.cause).toBeInstanceOf(InvalidArgumentError)
  expect((errors[0]!.cause as Error).message).toMatch(/cannot store headers/)
  const [again] = await pollN(c, 1, 3000)
  expect([again!.offset, again!.deliveryCount]).toEqual([offset, deliveryCount + 1])
  again!.ack()
}

export { pollN }
