import type { Backend } from '../backends/backend.js'
import { ID_HEADER } from '../backends/record.js'
import type { PreparedRecord } from './send-record.js'

/** Whether any record of a write carries an idempotency id (`SendOptions.id`). */
export function hasIds(records: readonly PreparedRecord[]): boolean {
  for (let i = 0; i < records.length; i++)
    if ((records[i] as PreparedRecord).headers?.[ID_HEADER] !== undefined) return true
  return false
}

/**
 * Append one partition's records of which some carry an id (`TopicStore.appendIdempotent`): each
 * record gets its offset, and `duplicate` when its id was stored within `windowMs` (nothing was
 * written for it). Resolves with the first record's offset.
 */
export async function appendIdempotent(
  backend: Backend,
  topic: string,
  partition: number,
  records: readonly PreparedRecord[],
  producerId: string,
  windowMs: number,
): Promise<number> {
  const results = await backend.appendIdempotent(topic, partition, records, producerId, windowMs)
  for (let k = 0; k < records.length; k++) {
    const r = records[k] as PreparedRecord
    const got = results[k] as { offset: number; duplicate: boolean }
    r.offset = got.offset
    if (got.duplicate) r.duplicate = true
  }
  return (results[0] as { offset: number }).offset
}
