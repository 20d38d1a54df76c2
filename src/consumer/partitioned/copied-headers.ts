import { ID_HEADER } from '../../backends/record.js'
import { SOURCE_HEADER } from '../../backends/source-header.js'

/**
 * A record's headers for a copy of it written as an output (the join topic's, a late record's):
 * without its `x-twain-source` (an earlier processor's: the copy has its own) and its `x-twain-id`
 * (an idempotent send's id, which goes with no timestamp, and names the first write only).
 */
export function copiedHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = { ...headers }
  delete out[SOURCE_HEADER]
  delete out[ID_HEADER]
  return out
}
