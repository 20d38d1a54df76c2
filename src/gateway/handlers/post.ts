import type { RecordInput } from '../../backends/record.js'
import { bodyRecords, stamp } from '../stream/body-records.js'
import { stateOfAppend } from '../stream/state-records.js'
import { mediaType } from '../transport/content.js'
import type { GatewayContext } from '../config/context.js'
import { HttpStatusError, reply, type GwRequest, type GwResponse } from '../transport/http.js'
import type { StreamTarget } from '../stream/names.js'
import { formatToken } from '../stream/offsets.js'
import { CLOSE_TYPE, H_EPOCH, H_PRODUCER, H_SEQ, H_STREAM_SEQ, controlRecord, isControl } from '../stream/records.js'
import { producerHeaders, wantsClose, type ProducerHeaders } from '../transport/request-headers.js'
import { AppendConflictError } from '../../core/errors.js'
import { appendIf } from '../stream/stream-append.js'
import { producerTuple, type FoldedState } from '../stream/stream-state.js'
import { liveView } from '../stream/live-view.js'
import { requestContext } from '../../telemetry/server.js'
import type { InstanceTelemetry } from '../../telemetry/hooks.js'

type Decision = { reply: GwResponse } | { accept: true }

const closedConflict = (token: string): HttpStatusError =>
  new HttpStatusError(409, 'The stream is closed', { 'stream-closed': 'true', 'stream-next-offset': token })

/** The producer rules (Durable Streams §5.2.1) against the folded state. */
function checkProducer(p: ProducerHeaders, state: FoldedState, tail: string): Decision {
  const known = state.producers.get(p.id)
  const h = (seq: number): Record<string, string> => ({
    'producer-epoch': String(p.epoch),
    'producer-seq': String(seq),
    'stream-next-offset': tail,
  })
  if (!known) {
    if (p.seq !== 0)
      throw new HttpStatusError(
        409,
        `Producer ${JSON.stringify(p.id)} is unknown: its first seq must be 0, got ${p.seq}`,
        { 'producer-expected-seq': '0', 'producer-received-seq': String(p.seq) },
      )
    return { accept: true }
  }
  if (p.epoch < known.epoch)
    throw new HttpStatusError(403, `Producer-Epoch ${p.epoch} is stale: the current epoch is ${known.epoch}`, {
      'producer-epoch': String(known.epoch),
    })
  if (p.epoch > known.epoch) {
    if (p.seq !== 0)
      throw new HttpStatusError(400, `A new Producer-Epoch (${p.epoch}) must start at seq 0, got ${p.seq}`)
    return { accept: true }
  }
  if (p.seq <= known.seq) return { reply: reply(204, h(known.seq)) }
  if (p.seq > known.seq + 1) {
    throw new HttpStatusError(409, `Producer-Seq ${p.seq} leaves a gap: expected ${known.seq + 1}`, {
      'producer-expected-seq': String(known.seq + 1),
      'producer-received-seq': String(p.seq),
    })
  }
  return { accept: true }
}

/** POST: append (and/or close). Check-then-append through `appendIf`, retried on a conflict. */
export async function postStream(ctx: GatewayContext, req: GwRequest, target: StreamTarget): Promise<GwResponse> {
  const producer = producerHeaders(req)
  const close = wantsClose(req)
  const streamSeq = req.header('stream-seq')
  const body = await req.body(ctx.options.maxBodyBytes)
  for (;;) {
    const v = await liveView(ctx, target, true)
    if (!v.config)
      throw new HttpStatusError(405, `Stream "${target.name}" is a topic of the Node API: read-only over HTTP`)
    const state = v.state
    const tail = formatToken(v.incarnation, v.tail)
    if (body.length === 0 && !close)
      throw new HttpStatusError(400, 'An append needs a body (or Stream-Closed: true to close)')
    if (state.closedAt !== undefined) {
      if (producer && state.closedBy === producerTuple(producer.id, producer.epoch, producer.seq)) {
        return reply(204, {
          'stream-closed': 'true',
          'stream-next-offset': tail,
          'producer-epoch': String(producer.epoch),
          'producer-seq': String(producer.seq),
        })
      }
      if (body.length === 0 && !producer) return reply(204, { 'stream-closed': 'true', 'stream-next-offset': tail })
      throw closedConflict(tail)
    }
    let records: RecordInput[] = []
    if (body.length > 0) {
      const ct = req.header('content-type')
      if (ct === undefined || ct.trim() === '')
        throw new HttpStatusError(400, 'An append with a body needs a Content-Type')
      if (mediaType(ct) !== mediaType(v.contentType))
        throw new HttpStatusError(409, `Content-Type ${ct} differs from the stream's ${v.contentType}`)
    }
    const headers: Record<string, string> = {}
    if (producer) {
      const d = checkProducer(producer, state, tail)
      if ('reply' in d) return d.reply
      Object.assign(headers, {
        [H_PRODUCER]: producer.id,
        [H_EPOCH]: String(producer.epoch),
        [H_SEQ]: String(producer.seq),
      })
    }
    if (streamSeq !== undefined) {
      if (state.streamSeq !== undefined && streamSeq <= state.streamSeq)
        throw new HttpStatusError(
          409,
          `Stream-Seq ${JSON.stringify(streamSeq)} is not after the last one (${JSON.stringify(state.streamSeq)})`,
        )
      headers[H_STREAM_SEQ] = streamSeq
    }
    if (body.length > 0) {
      records = bodyRecords(v.contentType, body, v.config.compaction)
      if (records.length === 0) throw new HttpStatusError(400, 'An empty JSON array appends nothing')
    }
    const compacted = v.config.compaction !== undefined
    // Where compaction could remove the first record, the state has records of its own.
    if (compacted) records.push(...stateOfAppend(headers))
    // The close marker carries the producer tuple too: a retry of the closing append is a duplicate.
    if (close)
      records.push(
        controlRecord(
          CLOSE_TYPE,
          null,
          producer
            ? { [H_PRODUCER]: producer.id, [H_EPOCH]: String(producer.epoch), [H_SEQ]: String(producer.seq) }
            : undefined,
        ),
      )
    if (!compacted) stamp(records, headers)
    traceRecords(ctx, req, records)
    let first: number
    try {
      first = await appendIf(ctx.store, target.topic, records, state.covered, ctx.clientId, compacted)
    } catch (e) {
      if (e instanceof AppendConflictError) continue
      throw e
    }
    // After the append, or at the close marker: the stream's final offset.
    const end = first + records.length - (close ? 1 : 0)
    const h: Record<string, string> = { 'stream-next-offset': formatToken(v.incarnation, end) }
    if (close) h['stream-closed'] = 'true'
    if (compacted) ctx.compaction.touched(target.topic)
    ctx.subscriptions?.touched(target.name)
    if (!producer) return reply(204, h)
    h['producer-epoch'] = String(producer.epoch)
    h['producer-seq'] = String(producer.seq)
    return reply(body.length > 0 ? 200 : 204, h)
  }
}

/** Each data record of an append carries the request's trace context (its server span's), when propagated. */
function traceRecords(ctx: GatewayContext, req: GwRequest, records: RecordInput[]): void {
  const tel = ctx.telemetry
  const sc = tel === undefined ? undefined : requestContext(req)
  if (sc === undefined) return
  for (const r of records) if (!isControl(r.type)) r.headers = (tel as InstanceTelemetry).withContext(r.headers, sc)
}
