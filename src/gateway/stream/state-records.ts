import { randomUUID } from 'node:crypto'
import type { RecordInput } from '../../backends/record.js'
import { ValueKind } from '../../core/values.js'
import { HttpStatusError, type GwRequest } from '../transport/http.js'
import { H_EPOCH, H_EVENT, H_PRODUCER, H_SEQ, H_STREAM_SEQ, isControl, record } from './records.js'

/**
 * How a stream can be compacted (`Stream-Compaction` on its PUT): `state`, by the entity of each
 * State Protocol change event (its `type` and `key`), a delete being a tombstone.
 */
export type Compaction = 'state'

/** The request and response header naming a stream's compaction. */
export const COMPACTION_HEADER = 'stream-compaction'

/**
 * The `Stream-Compaction` of a PUT: undefined when absent, else `state` (any case); 400 for another
 * value, and on a fork (its source's records are not its own to compact).
 */
export function compactionHeader(req: GwRequest, forkedFrom: string | undefined): Compaction | undefined {
  const raw = req.header(COMPACTION_HEADER)
  if (raw === undefined) return undefined
  if (raw.trim().toLowerCase() !== 'state')
    throw new HttpStatusError(400, `Stream-Compaction ${JSON.stringify(raw)} is not supported: use "state"`)
  if (forkedFrom !== undefined) throw new HttpStatusError(400, 'A fork cannot be created with Stream-Compaction')
  return 'state'
}

/** Longest compaction key (`[type, key]` as JSON), in UTF-8 bytes. */
const MAX_STATE_KEY_BYTES = 4096

const OPERATIONS = new Set(['insert', 'update', 'upsert', 'delete'])
const CONTROLS = new Set(['snapshot-start', 'snapshot-end', 'reset'])

/** Message type of a compacted stream's record of a producer's last append (its headers). */
const PRODUCER_TYPE = 'ds.producer'
/** Message type of a compacted stream's record of the last `Stream-Seq`. */
const STREAM_SEQ_TYPE = 'ds.seq'
/** Message type of the record ending a compacted stream's append that has neither producer nor `Stream-Seq`. */
const TAIL_TYPE = 'ds.tail'

const preview = (v: unknown): string => {
  const text = JSON.stringify(v) ?? String(v)
  return text.length > 120 ? `${text.slice(0, 117)}...` : text
}

const bad = (index: number, what: string, item: unknown): HttpStatusError =>
  new HttpStatusError(400, `State Protocol event ${index} ${what}: ${preview(item)}`)

/**
 * The record of one State Protocol event (`@durable-streams/state`) on a compacted stream, keyed
 * by what compaction keeps the latest of:
 * - a change event (`headers.operation` insert, update, upsert or delete, a non-empty string
 *   `type` and `key`, a `value` unless a delete): its entity, `[type, key]` as JSON; a delete is
 *   stored as a tombstone (a `null` value, the event in the `ds.event` header), so compaction
 *   removes the entity altogether once the topic's tombstone retention has passed;
 * - a control event (`headers.control`: snapshot-start, snapshot-end, reset): a key of its own,
 *   so every one is kept (a `reset` must still precede what it resets).
 * 400 for anything else, naming the event (`index` in the append) and showing it.
 */
export function stateRecord(item: unknown, index: number): RecordInput {
  if (typeof item !== 'object' || item === null || Array.isArray(item))
    throw bad(index, 'is not an object (a change or control event)', item)
  const e = item as { type?: unknown; key?: unknown; value?: unknown; headers?: unknown }
  const h = e.headers
  if (typeof h !== 'object' || h === null || Array.isArray(h))
    throw bad(index, 'has no headers object (with operation or control)', item)
  const { operation, control } = h as { operation?: unknown; control?: unknown }
  const text = JSON.stringify(item)
  if (operation === undefined && typeof control === 'string' && CONTROLS.has(control))
    return record(ValueKind.Json, text, undefined, undefined, `ds.control/${randomUUID()}`)
  if (typeof operation !== 'string' || !OPERATIONS.has(operation))
    throw bad(
      index,
      'has neither headers.operation (insert, update, upsert, delete) nor headers.control (snapshot-start, snapshot-end, reset)',
      item,
    )
  if (typeof e.type !== 'string' || e.type === '') throw bad(index, 'needs a non-empty string type', item)
  if (typeof e.key !== 'string' || e.key === '') throw bad(index, 'needs a non-empty string key', item)
  if (operation !== 'delete' && e.value === undefined) throw bad(index, `(${operation}) needs a value`, item)
  const key = JSON.stringify([e.type, e.key])
  if (Buffer.byteLength(key) > MAX_STATE_KEY_BYTES)
    throw bad(index, `has a type and key longer than ${MAX_STATE_KEY_BYTES} bytes`, item)
  return operation === 'delete'
    ? record(ValueKind.Json, 'null', undefined, { [H_EVENT]: text }, key)
    : record(ValueKind.Json, text, undefined, undefined, key)
}

/**
 * The records that end every append to a compacted stream (before a close marker), keeping what
 * `stream-state.ts` folds where compaction leaves it: the producer's state (a record per producer,
 * keyed by its id) and the last `Stream-Seq`, which on a plain stream ride on the append's first
 * record instead, and otherwise a `ds.tail` record. Each is the latest of its key, never a
 * tombstone, so the last record of the stream always stays: were it a delete whose tombstone
 * compaction removed, a fold from the start would end an offset short of the stream's end.
 */
export function stateOfAppend(headers: Record<string, string>): RecordInput[] {
  const out: RecordInput[] = []
  const id = headers[H_PRODUCER]
  if (id !== undefined) {
    const tuple = { [H_PRODUCER]: id, [H_EPOCH]: headers[H_EPOCH] ?? '0', [H_SEQ]: headers[H_SEQ] ?? '0' }
    out.push(record(ValueKind.Typed, '{}', PRODUCER_TYPE, tuple, `ds.producer/${id}`))
  }
  const seq = headers[H_STREAM_SEQ]
  if (seq !== undefined)
    out.push(record(ValueKind.Typed, '{}', STREAM_SEQ_TYPE, { [H_STREAM_SEQ]: seq }, 'ds.stream-seq'))
  if (out.length === 0) out.push(record(ValueKind.Typed, '{}', TAIL_TYPE, undefined, TAIL_TYPE))
  return out
}

/**
 * The records of an append as a compacted stream's topic takes them: control records (configuration,
 * close and delete markers, made with key 0) get a key of their own, their type, so compaction
 * keeps each, and a non-null value (a `null` one would be a tombstone). Data records come keyed
 * from {@link stateRecord}.
 */
export function keyedForCompaction(records: readonly RecordInput[]): RecordInput[] {
  return records.map((r) => {
    if (typeof r.key !== 'number') return r
    if (!isControl(r.type))
      throw new Error(`A data record of a compacted stream has no compaction key (type ${String(r.type)})`)
    const value = r.value === 'null' ? '{}' : r.value
    return record(r.kind, value, r.type, r.headers, r.type)
  })
}
