import type { TopicMeta } from '../../backends/backend.js'
import { TopicNotFoundError } from '../../core/errors.js'
import { coalescing } from './coalesce.js'
import type { GatewayContext } from '../config/context.js'
import { HttpStatusError } from '../transport/http.js'
import type { StreamTarget } from './names.js'
import { FIRST_DATA_OFFSET, readConfig, type Segment, type StreamConfig } from './stream-config.js'
import { catchUp, type FoldedState } from './stream-state.js'

/** A stream as one request sees it: its topic, configuration, folded state and the chain it reads. */
export interface StreamView {
  target: StreamTarget
  meta: TopicMeta
  incarnation: number
  /** `null` for a topic created by the Node API (read-only over HTTP, served as JSON). */
  config: StreamConfig | null
  contentType: string
  /** Inherited segments then the stream's own one (last). */
  chain: Segment[]
  state: FoldedState
  /** The final offset when closed, else the end: where reads stop. */
  tail: number
  /** First retained offset of the stream's own partition (a Node topic's retention may trim it). */
  retainedStart: number
}

export const accessKey = (v: { target: StreamTarget; incarnation: number }): string =>
  `${v.target.topic}~${v.target.partition}@${v.incarnation}`

/** The stream's topic meta, or undefined when the topic does not exist. */
async function metaOf(ctx: GatewayContext, topic: string): Promise<TopicMeta | undefined> {
  try {
    return await ctx.store.getTopic(topic)
  } catch (e) {
    if (e instanceof TopicNotFoundError) return undefined
    throw e
  }
}

const loads = new WeakMap<
  object,
  (key: string, run: () => Promise<StreamView | undefined>) => Promise<StreamView | undefined>
>()

/**
 * Load a stream as it is now, or `undefined` when it does not exist (expiry not yet applied).
 * Concurrent loads of one stream are shared (see {@link coalescing}): the view is as of a moment
 * after the call, and callers must not modify it.
 */
export function loadView(ctx: GatewayContext, target: StreamTarget): Promise<StreamView | undefined> {
  let load = loads.get(ctx.store)
  if (!load) loads.set(ctx.store, (load = coalescing()))
  return load(`${target.name}\n${target.topic}~${target.partition}`, () => loadNow(ctx, target))
}

async function loadNow(ctx: GatewayContext, target: StreamTarget): Promise<StreamView | undefined> {
  const meta = await metaOf(ctx, target.topic)
  if (!meta) return undefined
  if (target.perPartition ? target.partition >= meta.partitions : meta.partitions > 1) {
    if (target.perPartition) return undefined
    throw new HttpStatusError(
      404,
      `Topic "${target.topic}" has ${meta.partitions} partitions: read them as streams ${target.topic}~0 .. ${target.topic}~${meta.partitions - 1}`,
    )
  }
  const incarnation = meta.createdAt
  const config = target.perPartition ? null : await readConfig(ctx.store, target.topic, incarnation)
  let state: FoldedState
  let retainedStart = 0
  if (config) state = await catchUp(ctx.store, target.topic, incarnation)
  else {
    const offsets = await ctx.store.offsets(target.topic)
    const part = offsets.find((o) => o.partition === target.partition)
    const end = part?.end ?? 0
    retainedStart = part?.start ?? 0
    state = {
      covered: end,
      producers: new Map(),
      streamSeq: undefined,
      closedAt: undefined,
      closedBy: undefined,
      deletedAt: undefined,
      lastWrite: 0,
    }
  }
  const own: Segment = {
    topic: target.topic,
    partition: target.partition,
    incarnation,
    start: config ? FIRST_DATA_OFFSET : 0,
  }
  return {
    target,
    meta,
    incarnation,
    config: config ?? null,
    contentType: config?.contentType ?? 'application/json',
    chain: [...(config?.inherited ?? []), own],
    state,
    tail: state.closedAt ?? state.covered,
    retainedStart,
  }
}
