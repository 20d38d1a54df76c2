import { InvalidArgumentError, InvalidKeyTypeError, TopicExistsError } from '../../core/errors.js'
import { bodyRecords } from '../stream/body-records.js'
import { isJson, mediaType } from '../transport/content.js'
import type { GatewayContext } from '../config/context.js'
import { forkSource, planFork, type ForkPlan } from './fork.js'
import { HttpStatusError, reply, type GwRequest, type GwResponse } from '../transport/http.js'
import type { StreamTarget } from '../stream/names.js'
import { formatToken } from '../stream/offsets.js'
import { tailPosition, tokenOf } from '../reads/read.js'
import { CLOSE_TYPE, COMPACTED_KEY_TYPE, controlRecord, GATEWAY_KEY_TYPE } from '../stream/records.js'
import { COMPACTION_HEADER, compactionHeader, stateOfAppend } from '../stream/state-records.js'
import { expiresAtHeader, storedContentType, uintHeader, wantsClose } from '../transport/request-headers.js'
import { appendIf } from '../stream/stream-append.js'
import { FIRST_DATA_OFFSET, configRecord, type StreamConfig } from '../stream/stream-config.js'
import { removeExpired } from '../stream/stream-delete.js'
import { isExpired } from '../stream/access-time.js'
import { loadView, type StreamView } from '../stream/stream-view.js'

/** The headers of a PUT, checked (400 for bad TTL / Expires-At / fork headers). */
function requested(req: GwRequest) {
  const ttl = uintHeader(req, 'stream-ttl')
  const exp = expiresAtHeader(req)
  if (ttl !== undefined && exp !== undefined)
    throw new HttpStatusError(400, 'Send Stream-TTL or Stream-Expires-At, not both')
  const forkedFrom = req.header('stream-forked-from')
  const sub = uintHeader(req, 'stream-fork-sub-offset')
  if (sub !== undefined && forkedFrom === undefined)
    throw new HttpStatusError(400, 'Stream-Fork-Sub-Offset needs Stream-Forked-From')
  return {
    ttl,
    exp,
    forkedFrom,
    forkOffset: req.header('stream-fork-offset'),
    sub: sub ?? 0,
    closed: wantsClose(req),
    contentType: storedContentType(req.header('content-type')),
    compaction: compactionHeader(req, forkedFrom),
  }
}
type Requested = ReturnType<typeof requested>

function headersOf(v: StreamView): Record<string, string> {
  const h: Record<string, string> = { 'content-type': v.contentType, 'stream-next-offset': tokenOf(v, tailPosition(v)) }
  if (v.state.closedAt !== undefined) h['stream-closed'] = 'true'
  if (v.config?.compaction !== undefined) h[COMPACTION_HEADER] = v.config.compaction
  return h
}

/** Whether an existing stream has the configuration a PUT asks for. */
function sameConfig(v: StreamView, r: Requested): boolean {
  const c = v.config
  if (!c) return false
  if (r.contentType !== undefined && mediaType(r.contentType) !== mediaType(c.contentType)) return false
  if (r.forkedFrom === undefined && (r.ttl !== c.ttlSeconds || r.exp?.ms !== c.expiresAtMs)) return false
  if (
    r.forkedFrom !== undefined &&
    ((r.ttl !== undefined && r.ttl !== c.ttlSeconds) || (r.exp !== undefined && r.exp.ms !== c.expiresAtMs))
  )
    return false
  if (r.closed !== (v.state.closedAt !== undefined)) return false
  if (r.forkedFrom !== c.forkedFrom) return false
  if (r.compaction !== c.compaction) return false
  if (r.forkedFrom !== undefined && r.forkOffset !== undefined && r.forkOffset !== c.forkOffset) return false
  return r.sub === (c.forkSubOffset ?? 0)
}

/** PUT: create a stream (201), or 200 when it exists with this configuration, 409 otherwise. */
export async function putStream(ctx: GatewayContext, req: GwRequest, target: StreamTarget): Promise<GwResponse> {
  const r = requested(req)
  if (target.perPartition)
    throw new HttpStatusError(405, `Stream "${target.name}" is a partition of a Node topic: read-only`)
  const body = await req.body(ctx.options.maxBodyBytes)
  for (let attempt = 0; ; attempt++) {
    let existing = await loadView(ctx, target)
    if (existing && (await isExpired(ctx, existing))) {
      await removeExpired(ctx, existing)
      existing = undefined
    }
    if (existing) {
      if (!existing.config)
        throw new HttpStatusError(
          409,
          `Stream "${target.name}" is a topic of the Node API: it exists, with another configuration`,
        )
      if (existing.state.deletedAt !== undefined)
        throw new HttpStatusError(
          409,
          `Stream "${target.name}" is deleted but still serves its forks: it cannot be created again yet`,
        )
      if (!sameConfig(existing, r))
        throw new HttpStatusError(409, `Stream "${target.name}" exists with another configuration`)
      return reply(200, headersOf(existing))
    }
    let fork: ForkPlan | undefined
    if (r.forkedFrom !== undefined) {
      const source = await forkSource(ctx, ctx.options.basePath, r.forkedFrom)
      if (r.contentType !== undefined && mediaType(r.contentType) !== mediaType(source.contentType)) {
        throw new HttpStatusError(
          409,
          `Content-Type ${r.contentType} differs from the fork source's ${source.contentType}`,
        )
      }
      fork = await planFork(ctx, source, r.forkOffset, r.sub)
    }
    const contentType = fork ? fork.source.contentType : (r.contentType ?? 'application/octet-stream')
    const compacted = r.compaction !== undefined
    if (compacted && !isJson(contentType))
      throw new HttpStatusError(
        400,
        `Stream-Compaction: ${r.compaction} needs a JSON stream (Content-Type: application/json), got ${contentType}`,
      )
    const inheritTtl = fork && r.ttl === undefined && r.exp === undefined ? fork.source.config : undefined
    const config: StreamConfig = {
      contentType,
      ttlSeconds: r.ttl ?? inheritTtl?.ttlSeconds,
      expiresAt: r.exp?.raw ?? inheritTtl?.expiresAt,
      expiresAtMs: r.exp?.ms ?? inheritTtl?.expiresAtMs,
      createdClosed: r.closed,
      forkedFrom: r.forkedFrom,
      forkOffset: r.forkOffset,
      forkSubOffset: r.sub > 0 ? r.sub : undefined,
      inherited: fork?.inherited ?? [],
      compaction: r.compaction,
    }
    const records = [
      configRecord(config),
      ...(fork?.prefix ?? []),
      ...(body.length > 0 ? bodyRecords(contentType, body, r.compaction) : []),
      ...(compacted ? stateOfAppend({}) : []),
    ]
    if (r.closed) records.push(controlRecord(CLOSE_TYPE, null))
    const newest = config.inherited.at(-1)?.incarnation ?? 0
    const createdAt = Math.max(Date.now(), newest + 1)
    try {
      await ctx.store.createTopic({
        name: target.topic,
        partitions: 1,
        keyType: compacted ? COMPACTED_KEY_TYPE : GATEWAY_KEY_TYPE,
        ...(compacted ? { compact: true, tombstoneRetentionMs: ctx.options.tombstoneRetentionMs } : {}),
        messageTypes: [],
        retention: {},
        maxMessageBytes: Math.max(ctx.options.maxBodyBytes, 1024 * 1024),
        createdAt,
      })
    } catch (e) {
      if (e instanceof TopicExistsError && attempt < 5) continue // created meanwhile: answer as for an existing stream
      // A store that has no compacted topics (a Python TwainMQ root's key encodings have no strings).
      if (compacted && (e instanceof InvalidKeyTypeError || e instanceof InvalidArgumentError))
        throw new HttpStatusError(501, `This store cannot hold compacted streams: ${e.message}`)
      throw e
    }
    await appendIf(ctx.store, target.topic, records, 0, ctx.clientId, compacted)
    if (compacted) ctx.compaction.touched(target.topic)
    const tail = FIRST_DATA_OFFSET + records.length - 1 - (r.closed ? 1 : 0)
    const url = new URL(req.url.href)
    url.search = ''
    const h: Record<string, string> = {
      location: url.href,
      'content-type': contentType,
      'stream-next-offset': formatToken(createdAt, tail),
    }
    if (r.closed) h['stream-closed'] = 'true'
    if (r.compaction !== undefined) h[COMPACTION_HEADER] = r.compaction
    ctx.subscriptions?.touched(target.name)
    return reply(201, h)
  }
}
