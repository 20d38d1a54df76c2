import type { RecordInput } from '../backends/record.js'
import { ValueKind } from '../core/values.js'
import { isJson, mediaType } from './content.js'
import { HttpError } from './http.js'
import { H_BATCH, record } from './records.js'

/**
 * The records of one append body. JSON mode: the body is one value or an array whose items are
 * one message each (flattened one level), each a JSON value; `[]` is empty. Text mode (`text/*`):
 * one message with a string value (bytes when the body is not UTF-8). Byte mode: one message of
 * bytes. 400 for invalid JSON.
 */
export function bodyRecords(contentType: string, body: Buffer): RecordInput[] {
  if (isJson(contentType)) {
    let value: unknown
    try {
      value = JSON.parse(body.toString('utf8'))
    } catch (e) {
      throw new HttpError(400, `The body is not valid JSON: ${(e as Error).message}`)
    }
    const items = Array.isArray(value) ? value : [value]
    const records = items.map((item) => record(ValueKind.Json, JSON.stringify(item)))
    if (records.length > 1) records[0]!.headers = { [H_BATCH]: String(records.length) }
    return records
  }
  if (mediaType(contentType).startsWith('text/')) {
    const text = body.toString('utf8')
    if (Buffer.byteLength(text) === body.length && Buffer.from(text, 'utf8').equals(body)) return [record(ValueKind.Text, text)]
  }
  return [record(ValueKind.Bytes, Buffer.from(body))]
}

/** Put headers on the first record of an append (merged with what it has). */
export function stamp(records: RecordInput[], headers: Record<string, string>): void {
  const first = records[0]
  if (first) first.headers = { ...first.headers, ...headers }
}
