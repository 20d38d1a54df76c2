import { configHash, type SubscriptionConfig } from './definition.js'
import { globMatch } from './glob.js'
import type { StoredLink, StoredSubscription } from './subscription-log.js'

/** A followed stream as a wake shows it. */
export interface StreamInfo {
  path: string
  link_type: 'explicit' | 'glob'
  acked_offset: string
  tail_offset: string
  has_pending: boolean
}

/**
 * One subscription as the gateway runs it: its stored state (definition, streams and their acks,
 * generation) and its wake, which lives in memory only — a wake in flight when the gateway stops
 * is simply made again (with a new generation) by the next gateway, as after a lease expiry.
 */
export class Subscription {
  readonly links = new Map<string, StoredLink>()
  /** What a PUT of an equal definition matches (`configHash`). */
  readonly hash: string
  generation: number
  /** The wake in flight (undefined: none), what each stream's tail was when it began, its token and holder. */
  wakeId: string | undefined
  snapshot = new Map<string, string>()
  token: string | undefined
  holder: string | undefined
  leaseTimer: NodeJS.Timeout | undefined
  /** Counts lease extensions: a lease timer acts only if none came after it. */
  leases = 0
  /** Webhook delivery: `failed` while retrying, with the retry's timer. */
  status: 'active' | 'failed' = 'active'
  retries = 0
  retryTimer: NodeJS.Timeout | undefined
  /** Stream watches, per linked path. */
  readonly unwatch = new Map<string, () => void>()
  /** Operations on this subscription run one at a time, in order. */
  chain: Promise<unknown> = Promise.resolve()
  deleted = false

  constructor(
    readonly id: string,
    readonly config: SubscriptionConfig,
    readonly createdAt: string,
    /** Origin of the gateway as its callers reach it (callback and key-set URLs). */
    readonly origin: string,
    generation = 0,
    links: readonly StoredLink[] = [],
  ) {
    this.generation = generation
    this.hash = configHash(config)
    for (const l of links) this.links.set(l.path, { ...l })
  }

  /**
   * Whether its pattern takes the stream at `path`: it matches, and it is not the subscription's own
   * wake stream (its wake events would wake it again, forever; `link` refuses it too).
   */
  patternTakes(path: string): boolean {
    const pattern = this.config.pattern
    return pattern !== undefined && path !== this.config.wakeStream && globMatch(pattern, path)
  }

  /** The subject its bearer tokens are for (a subscription deleted and made again under its id is another). */
  get subject(): string {
    return `subscription:${this.id}:${this.createdAt}`
  }

  /** Forget the wake (acknowledged done, released, or its lease expired). */
  endWake(): void {
    if (this.leaseTimer !== undefined) clearTimeout(this.leaseTimer)
    this.leaseTimer = undefined
    this.wakeId = undefined
    this.token = undefined
    this.holder = undefined
    this.snapshot.clear()
  }

  stored(): StoredSubscription {
    return {
      id: this.id,
      config: this.config,
      createdAt: this.createdAt,
      origin: this.origin,
      generation: this.generation,
      links: [...this.links.values()].map((l) => ({ ...l })),
    }
  }
}
