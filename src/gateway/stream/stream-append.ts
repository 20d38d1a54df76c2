import type { TopicStore } from '../../backends/backend.js'
import type { RecordInput } from '../../backends/record.js'
import { keyedForCompaction } from './state-records.js'

/**
 * Append `records` to partition 0 of `topic` only if its end offset is still `expectedEnd`;
 * otherwise reject with `AppendConflictError` (the end found in `end`) having written nothing.
 * Resolves with the first record's offset.
 *
 * @remarks Every check-then-append of the gateway (producer epochs and sequences, Stream-Seq,
 * closure, deletion markers) goes through this one function: the gateway folds the log up to its
 * end, decides, and appends at that end. It is the store's compare-and-append (decision 119),
 * atomic across processes on the file backend (under the partition lock) and on Redis (in the
 * append script), so two gateway processes over one store never both pass a check. On a `compacted`
 * stream's topic, the control records get the keys that keep them ({@link keyedForCompaction}).
 */
export function appendIf(
  store: TopicStore,
  topic: string,
  records: readonly RecordInput[],
  expectedEnd: number,
  producerId: string,
  compacted: boolean,
): Promise<number> {
  return store.append(topic, 0, compacted ? keyedForCompaction(records) : records, producerId, { expectedEnd })
}
