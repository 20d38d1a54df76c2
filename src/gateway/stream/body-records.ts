import type { RecordInput } from '../../backends/record.js'
import { jsonTextDepth, MAX_JSON_DEPTH, tooDeep } from '../../core/json-depth.js'
import { ValueKind } from '../../core/values.js'
import { isJson, mediaType } from '../transport/content.js'
import { HttpStatusError } from '../transport/http.js'
import { H_BATCH, record } from './records.js'
import { stateRecord, type Compaction } from './state-records.js'

/**
 * The records of one append body. JSON mode: the body is one value or an array whose items are
 * one message each (flattened one level), each a JSON value; `[]` is empty. Text mode (`text/*`):
 * one message with a string value (bytes when the body is not UTF-8). Byte mode: one message of
 * bytes. 400 for invalid JSON, and for a value nested deeper than `MAX_JSON_DEPTH` (as `send`
 * refuses it; an array body's items are the values). A compacted stream's (`compaction`) messages are
 * State Protocol events, each keyed by what it changes ({@link stateRecord}).
 */
export function bodyRecords(contentType: string, body: Buffer, compaction?: Compaction): RecordInput[] {
  if (isJson(contentType)) {
    const text = body.toString('utf8')
    // Checked before parsing: JSON.parse recurses, and a body nested thousands deep overflows the stack.
    const depth = jsonTextDepth(text)
    const batch = /^\s*\[/.test(text)
    if (depth > MAX_JSON_DEPTH + (batch ? 1 : 0))
      throw new HttpStatusError(400, tooDeep(batch ? 'An item of the body' : 'The body', batch ? depth - 1 : depth))
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch (e) {
      throw new HttpStatusError(400, `The body is not valid JSON: ${(e as Error).message}`)
    }
    const items = Array.isArray(value) ? value : [value]
    if (compaction === 'state') return items.map(stateRecord)
    const records = items.map((item) => record(ValueKind.Json, JSON.stringify(item)))
    if (records.length > 1) records[0]!.headers = { [H_BATCH]: String(records.length) }
    return records
  }
  if (mediaType(contentType).startsWith('text/')) {
    const text = body.toString('utf8')
    if (Buffer.byteLength(text) === body.length && Buffer.from(text, 'utf8').equals(body))
      return [record(ValueKind.Text, text)]
  }
  return [record(ValueKind.Bytes, Buffer.from(body))]
}

/** Put headers on the first record of an append (merged with what it has). */
export function stamp(records: RecordInput[], headers: Record<string, string>): void {
  const first = records[0]
  if (first) first.headers = { ...first.headers, ...headers }
}
