// Loaded on demand (a dynamic import in message-stream.ts) by the first tail with `shareTabs`, so
// pages that do not share tails do not download the sharing code.
import type { ReadPlan } from './reader.js'
import { SharedTailReader } from './shared-reader.js'
import { shareOf } from './tab-share.js'

/** A tail in this page's share of `plan.shareKey`, or undefined where pages cannot share (no Web Locks or BroadcastChannel). */
export function openSharedTail<V>(plan: ReadPlan): SharedTailReader<V> | undefined {
  const share = plan.shareKey === undefined ? undefined : shareOf(plan.shareKey, plan)
  return share === undefined ? undefined : new SharedTailReader<V>(plan, plan.from, share)
}
