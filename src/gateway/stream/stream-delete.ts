import { AppendConflictError, TopicNotFoundError } from '../../core/errors.js'
import type { GatewayContext } from '../config/context.js'
import { DELETE_TYPE, controlRecord } from './records.js'
import { appendIf } from './stream-append.js'
import { readConfig, type Segment } from './stream-config.js'
import { catchUp, forgetFold } from './stream-state.js'
import { forgetAccess, isExpired } from './access-time.js'
import { loadView, type StreamView } from './stream-view.js'

/**
 * Forks are found from their configurations: a stream whose inherited segments include
 * `topic@incarnation` and that is not itself deleted keeps that topic's data alive.
 */
async function hasLiveForks(ctx: GatewayContext, seg: { topic: string; incarnation: number }): Promise<boolean> {
  for (const name of await ctx.store.listTopics()) {
    if (name === seg.topic) continue
    try {
      const meta = await ctx.store.getTopic(name)
      if (meta.partitions !== 1) continue
      const config = await readConfig(ctx.store, name, meta.createdAt)
      if (!config?.inherited.some((s) => s.topic === seg.topic && s.incarnation === seg.incarnation)) continue
      const fork = await loadView(ctx, { name, topic: name, partition: 0, perPartition: false })
      if (fork && fork.state.deletedAt === undefined && !(await isExpired(ctx, fork))) return true
    } catch (e) {
      if (!(e instanceof TopicNotFoundError)) throw e
    }
  }
  return false
}

async function dropTopic(ctx: GatewayContext, topic: string, incarnation: number): Promise<void> {
  try {
    const meta = await ctx.store.getTopic(topic)
    if (meta.createdAt !== incarnation) return // already deleted and created again
    await ctx.store.deleteTopic(topic)
  } catch (e) {
    if (!(e instanceof TopicNotFoundError)) throw e
  }
  forgetFold(ctx.store, topic, incarnation)
}

/** Append the soft-delete marker (the stream then answers 410 while its forks read it). */
async function softDelete(ctx: GatewayContext, v: StreamView): Promise<void> {
  for (;;) {
    const state = await catchUp(ctx.store, v.target.topic, v.incarnation)
    if (state.deletedAt !== undefined) return
    try {
      const marker = [controlRecord(DELETE_TYPE, null)]
      await appendIf(ctx.store, v.target.topic, marker, state.covered, ctx.clientId, v.meta.compact === true)
      return
    } catch (e) {
      if (!(e instanceof AppendConflictError)) throw e
    }
  }
}

/** After a stream is gone: delete the soft-deleted streams it inherited from that no live fork needs now. */
async function collect(ctx: GatewayContext, inherited: readonly Segment[]): Promise<void> {
  for (const seg of [...inherited].reverse()) {
    const v = await loadView(ctx, { name: seg.topic, topic: seg.topic, partition: 0, perPartition: false }).catch(
      () => undefined,
    )
    if (!v || v.incarnation !== seg.incarnation || v.state.deletedAt === undefined) continue
    if (!(await hasLiveForks(ctx, seg))) await dropTopic(ctx, seg.topic, seg.incarnation)
  }
}

/** Delete a stream: soft when live forks still read it, else for good (then collect its sources). */
export async function deleteStream(ctx: GatewayContext, v: StreamView): Promise<void> {
  if (await hasLiveForks(ctx, { topic: v.target.topic, incarnation: v.incarnation })) {
    await softDelete(ctx, v)
    return
  }
  await dropTopic(ctx, v.target.topic, v.incarnation)
  forgetAccess(ctx, v)
  await collect(ctx, v.config?.inherited ?? [])
}

/** An expired stream is deleted as by DELETE (soft when forks still read it). */
export async function removeExpired(ctx: GatewayContext, v: StreamView): Promise<void> {
  if (v.state.deletedAt === undefined) await deleteStream(ctx, v)
}
