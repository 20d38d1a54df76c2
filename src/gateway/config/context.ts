import type { Backend } from '../../backends/backend.js'
import type { LiveLimit } from '../reads/live-limit.js'
import type { ResolvedGatewayOptions } from './options.js'
import type { StatsHub } from '../overview/stats-hub.js'
import type { InstanceTelemetry } from '../../telemetry/hooks.js'

/** What every handler gets: the store, the options, this gateway's producer id and its shutdown signal. */
export interface GatewayContext {
  store: Backend
  options: ResolvedGatewayOptions
  /** Stored as `producerId` of every record the gateway writes. */
  clientId: string
  /** Aborted by `gateway.close()`: open SSE and long-poll responses end. */
  closing: AbortSignal
  /** Last access (ms) per stream incarnation known to this gateway, for sliding TTLs (shared through the store: access-time.ts). */
  access: Map<string, number>
  /** Live reads open per client (`maxLivePerClient`). */
  live: LiveLimit
  /** The store sampler of the overview endpoints (runs only while a `/v1/live` viewer is connected). */
  stats: StatsHub
  /** Work begun for no request (a page read ahead): `gateway.close()` waits for it too. */
  background: (work: Promise<unknown>) => void
  /** The twain's telemetry (server spans, the trace context of appended records), if it has any. */
  telemetry: InstanceTelemetry | undefined
  /** The `__ds` subscriptions (with `subscriptions: true`), as the handlers tell them of streams created or appended to. */
  subscriptions: SubscriptionHooks | undefined
  /** The compaction passes of compacted streams (`stream/compaction-schedule.ts`), told of each append to one. */
  compaction: CompactionHooks
}

/** What a handler tells the compaction passes, and what `gateway.close()` waits for. */
export interface CompactionHooks {
  /** `topic`, a compacted stream's, was written through this gateway. */
  touched(topic: string): void
  /** No pass starts from now on; resolves once the one running has ended. */
  close(): Promise<void>
}

/** What a handler tells the subscriptions (`subscriptions/manager.ts`). */
export interface SubscriptionHooks {
  /** The stream at `path` was created or appended to through this gateway. */
  touched(path: string): void
}
