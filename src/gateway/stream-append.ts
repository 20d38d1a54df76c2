import type { TopicStore } from '../backends/backend.js'
import type { RecordInput } from '../backends/record.js'
import { TwainError } from '../core/errors.js'
import { perStore } from './per-store.js'

/** `appendIf` found the partition's end elsewhere than expected: catch up from `actualEnd` and re-check. */
export class AppendConflict extends TwainError {
  constructor(
    readonly topic: string,
    readonly expectedEnd: number,
    readonly actualEnd: number,
  ) {
    super(`Append to "${topic}" expected the end at ${expectedEnd}, found ${actualEnd}`, { code: 'ERR_APPEND_CONFLICT', retriable: true })
  }
}

const locksOf = perStore<Promise<void>>()

/**
 * Append `records` to partition 0 of `topic` only if its end offset is still `expectedEnd`;
 * otherwise reject with {@link AppendConflict}. Resolves with the first record's offset.
 *
 * @remarks Every check-then-append of the gateway (producer epochs/seqs, Stream-Seq, closure) goes
 * through this one function. **For now it is atomic only within one process**: an in-process mutex
 * per topic (per store object) serialises the end check and the append. Two gateway processes over one store can both
 * pass the check. It is to be replaced by the backends' compare-and-append
 * (`append(topic, partition, records, producerId, { expectedEnd })`, rejecting with the actual end),
 * which makes it atomic across processes.
 */
export async function appendIf(store: TopicStore, topic: string, records: readonly RecordInput[], expectedEnd: number, producerId: string): Promise<number> {
  const locks = locksOf(store)
  const previous = locks.get(topic) ?? Promise.resolve()
  let release!: () => void
  const mine = new Promise<void>((r) => (release = r))
  const chained = previous.then(() => mine)
  locks.set(topic, chained)
  await previous
  try {
    const [p] = await store.offsets(topic)
    const end = p?.end ?? 0
    if (end !== expectedEnd) throw new AppendConflict(topic, expectedEnd, end)
    return await store.append(topic, 0, records, producerId)
  } finally {
    release()
    if (locks.get(topic) === chained) locks.delete(topic)
  }
}
