import { randomBytes } from 'node:crypto'
import type { GatewayContext, SubscriptionHooks } from '../config/context.js'
import { parseStreamName } from '../stream/names.js'
import { isOffsetToken } from '../stream/offsets.js'
import { configHash, parseConfig, streamPath, SubscriptionError, trimSlashes } from './definition.js'
import { deliverWake, type Delivery } from './delivery.js'
import { globMatch } from './glob.js'
import { SubscriptionKeys } from './keys.js'
import { compareTokens, linkedAt, streamEnds, streamInfos, streamPaths } from './stream-ends.js'
import { Subscription, type StreamInfo } from './subscription.js'
import { SubscriptionLog, type StoredLink } from './subscription-log.js'

/** How often every subscription's streams are looked at (new streams of a pattern, appends no watch saw). */
const SWEEP_MS = 2000
/** Longest wait between two deliveries of one webhook wake. */
const MAX_RETRY_MS = 60_000

/** Appends one JSON event to a stream (a pull-wake subscription's wake stream). */
export type WakeWriter = (path: string, event: Record<string, unknown>) => Promise<void>

/** A request's answer to a wake: `{ ok, next_wake }`. */
export interface WakeAnswer {
  ok: true
  next_wake: boolean
}

/**
 * The Durable Streams subscriptions of a gateway (docs/gateway.md, "Subscriptions"): webhook and
 * pull-wake subscriptions over the streams a pattern matches or a list names. Each has, per
 * stream, an acknowledged offset; a stream whose tail is past it has pending work, and a
 * subscription with pending work gets a wake: a new generation, a signed POST to its webhook or
 * an event in its wake stream, and a bearer token that a consumer (the webhook's receiver, or the
 * worker that claimed the wake) uses to acknowledge offsets. A lease ends a wake its consumer does
 * not finish in time; a later generation's token fences every earlier one. Definitions, acks and
 * generations are kept in the store (`SubscriptionLog`); appends are noticed by store watches
 * (whoever wrote them) and a sweep.
 */
export class Subscriptions implements SubscriptionHooks {
  readonly keys = new SubscriptionKeys()
  private readonly subs = new Map<string, Subscription>()
  private readonly log: SubscriptionLog
  private loaded: Promise<void> | undefined
  private sweepTimer: NodeJS.Timeout | undefined
  private retryTimer: NodeJS.Timeout | undefined
  private closed = false
  private readonly stop = new AbortController()
  private readonly poking = new Set<Subscription>()

  /** Make the subscriptions of a gateway's context (its handlers tell them of appends). */
  static attach(ctx: GatewayContext, writeWake: WakeWriter, publicUrl: string | undefined): Subscriptions {
    const subs = new Subscriptions(ctx, writeWake, publicUrl)
    ctx.subscriptions = subs
    attached.set(ctx, subs)
    return subs
  }

  private constructor(
    private readonly ctx: GatewayContext,
    private readonly writeWake: WakeWriter,
    private readonly publicUrl: string | undefined,
  ) {
    this.log = new SubscriptionLog(ctx.store, ctx.clientId)
  }

  /** Load the stored subscriptions now, and again every sweep period until it succeeds (the store may be down). */
  start(): void {
    this.ready().catch(() => {
      if (this.closed) return
      this.retryTimer = setTimeout(() => this.start(), SWEEP_MS)
      this.retryTimer.unref()
    })
  }

  /** Load the stored subscriptions (once; again after a failure) and start watching. */
  ready(): Promise<void> {
    this.loaded ??= this.load().catch((e: unknown) => {
      this.loaded = undefined
      throw e
    })
    return this.loaded
  }

  private async load(): Promise<void> {
    for (const s of await this.log.load()) {
      if (this.subs.has(s.id)) continue
      const sub = new Subscription(s.id, s.config, s.createdAt, s.origin, s.generation, s.links)
      this.subs.set(s.id, sub)
      for (const path of sub.links.keys()) this.watch(sub, path)
      this.poke(sub)
    }
    if (!this.closed && this.sweepTimer === undefined) {
      this.sweepTimer = setInterval(() => this.ctx.background(this.sweep()), SWEEP_MS)
      this.sweepTimer.unref()
    }
  }

  /** `PUT`: create the subscription, or confirm one with an equal definition. */
  async put(id: string, body: unknown, origin: string): Promise<{ created: boolean; sub: Subscription }> {
    await this.ready()
    const config = parseConfig(body)
    const had = this.subs.get(id)
    if (had !== undefined) {
      // Hashed only to compare: a new subscription hashes its definition itself.
      if (had.hash !== configHash(config))
        throw new SubscriptionError(
          'SUBSCRIPTION_ALREADY_EXISTS',
          `Subscription ${JSON.stringify(id)} exists with another definition: delete it first`,
        )
      await had.chain // answered once it is stored
      return { created: false, sub: had }
    }
    const sub = new Subscription(id, config, new Date().toISOString(), this.publicUrl ?? origin)
    this.subs.set(id, sub)
    try {
      await this.run(sub, async () => {
        for (const path of config.streams) this.link(sub, path, 'explicit', await linkedAt(this.ctx, path))
        if (config.pattern !== undefined)
          for (const path of await streamPaths(this.ctx.store))
            if (sub.patternTakes(path)) this.link(sub, path, 'glob', (await streamEnds(this.ctx, path)).tail)
        await this.log.save(sub.stored())
      })
    } catch (e) {
      this.forget(sub)
      throw e
    }
    return { created: true, sub }
  }

  async get(id: string): Promise<Subscription> {
    await this.ready()
    const sub = this.subs.get(id)
    if (sub === undefined) throw notFound(id)
    return sub
  }

  /** `DELETE`: gone (also when it never was). */
  async delete(id: string): Promise<void> {
    await this.ready()
    const sub = this.subs.get(id)
    if (sub === undefined) return
    await this.run(sub, async () => {
      await this.log.remove(id) // first: if it fails, the subscription stays (and a retry deletes it)
      this.forget(sub)
    })
  }

  /** Link more streams by name. */
  async addStreams(id: string, streams: unknown): Promise<void> {
    const sub = await this.get(id)
    if (!Array.isArray(streams))
      throw new SubscriptionError(
        'INVALID_REQUEST',
        `streams must be an array of stream paths, got ${JSON.stringify(streams)}`,
      )
    const paths = streams.map((s, i) => streamPath(s, `streams[${i}]`))
    await this.run(sub, async () => {
      for (const path of paths) this.link(sub, path, 'explicit', await linkedAt(this.ctx, path))
      await this.log.save(sub.stored())
    })
    this.poke(sub)
  }

  /** Unlink a stream linked by name (a pattern's match stays). */
  async removeStream(id: string, raw: string): Promise<void> {
    const sub = await this.get(id)
    const path = trimSlashes(raw)
    await this.run(sub, async () => {
      const link = sub.links.get(path)
      if (link === undefined || !link.explicit) return
      link.explicit = false
      if (!link.glob) this.unlink(sub, path)
      await this.log.save(sub.stored())
    })
  }

  /** A webhook receiver's callback: acks, and `done` ends the wake. */
  async callback(id: string, token: string, body: unknown): Promise<WakeAnswer> {
    return this.acknowledge(await this.get(id), token, body)
  }

  /** A pull-wake worker's acks; `done` ends the wake. */
  async ack(id: string, token: string, body: unknown): Promise<WakeAnswer> {
    const sub = await this.pullWake(id)
    return this.acknowledge(sub, token, body)
  }

  /** A pull-wake worker takes the wake (one holder at a time). */
  async claim(
    id: string,
    worker: unknown,
  ): Promise<{ wake_id: string; generation: number; token: string; streams: StreamInfo[]; lease_ttl_ms: number }> {
    if (typeof worker !== 'string' || worker === '')
      throw new SubscriptionError('INVALID_REQUEST', `worker must be a non-empty string, got ${JSON.stringify(worker)}`)
    const sub = await this.pullWake(id)
    return this.run(sub, async () => {
      if (sub.holder !== undefined)
        throw new SubscriptionError('ALREADY_CLAIMED', `The wake is held by ${JSON.stringify(sub.holder)}`, {
          current_holder: sub.holder,
          generation: sub.generation,
        })
      const infos = await streamInfos(this.ctx, sub)
      const pending = infos.find((s) => s.has_pending)
      if (pending === undefined)
        throw new SubscriptionError('NO_PENDING_WORK', 'No stream of the subscription has pending work')
      if (sub.wakeId === undefined) await this.createWake(sub, infos, pending.path, true)
      sub.holder = worker
      sub.token = this.keys.token(sub.subject, sub.generation)
      this.extendLease(sub)
      return {
        wake_id: sub.wakeId as string,
        generation: sub.generation,
        token: sub.token,
        streams: infos,
        lease_ttl_ms: sub.config.leaseTtlMs,
      }
    })
  }

  /** A pull-wake worker gives the wake back unfinished. */
  async release(id: string, token: string, body: unknown): Promise<void> {
    const sub = await this.pullWake(id)
    await this.run(sub, async () => {
      this.checkWake(sub, token, body)
      sub.endWake()
      await this.maybeWake(sub)
    })
  }

  /** A stream was created or appended to through this gateway: link it where a pattern matches, wake at once. */
  touched(path: string): void {
    if (this.closed || this.loaded === undefined) return
    for (const sub of this.subs.values()) {
      const matched = sub.config.pattern !== undefined && globMatch(sub.config.pattern, path)
      if (matched && !sub.links.has(path) && path !== sub.config.wakeStream) {
        this.ctx.background(
          this.run(sub, async () => {
            if (sub.deleted || sub.links.has(path)) return
            this.link(sub, path, 'glob', '-1')
            await this.log.save(sub.stored())
          }),
        )
      }
      if (matched || sub.links.has(path)) this.poke(sub)
    }
  }

  /** The subscription as `GET` shows it. */
  view(sub: Subscription): Record<string, unknown> {
    const c = sub.config
    return {
      id: sub.id,
      subscription_id: sub.id,
      type: c.type,
      pattern: c.pattern,
      streams: [...sub.links.values()].map((l) => ({
        path: l.path,
        link_type: l.explicit ? 'explicit' : 'glob',
        acked_offset: l.acked,
      })),
      webhook:
        c.webhook === undefined
          ? undefined
          : {
              url: c.webhook.url,
              signing: { alg: 'ed25519', kid: this.keys.jwk.kid, jwks_url: this.url(sub, 'jwks') },
            },
      wake_stream: c.wakeStream,
      lease_ttl_ms: c.leaseTtlMs,
      created_at: sub.createdAt,
      status: sub.status,
      description: c.description,
    }
  }

  /** Stop: no more wakes, deliveries or sweeps. */
  close(): void {
    this.closed = true
    this.stop.abort()
    if (this.sweepTimer !== undefined) clearInterval(this.sweepTimer)
    if (this.retryTimer !== undefined) clearTimeout(this.retryTimer)
    for (const sub of this.subs.values()) this.quiet(sub)
  }

  // --- wakes ---

  private async acknowledge(sub: Subscription, token: string, body: unknown): Promise<WakeAnswer> {
    return this.run(sub, async () => {
      this.checkWake(sub, token, body)
      await this.applyAcks(sub, (body as { acks?: unknown }).acks)
      if ((body as { done?: unknown }).done !== true) {
        this.extendLease(sub)
        return { ok: true, next_wake: false }
      }
      sub.endWake()
      return { ok: true, next_wake: await this.maybeWake(sub) }
    })
  }

  /** 401 for a token that is not this subscription's, 409 `FENCED` for another generation's wake. */
  private checkWake(sub: Subscription, token: string, body: unknown): void {
    const t = this.keys.check(token, sub.subject)
    if (!t.ok)
      throw new SubscriptionError(t.code, t.code === 'TOKEN_EXPIRED' ? 'The token expired' : 'The token is not valid')
    const b = (body ?? {}) as { generation?: unknown; wake_id?: unknown }
    if (
      sub.wakeId === undefined ||
      t.generation !== sub.generation ||
      b.generation !== sub.generation ||
      b.wake_id !== sub.wakeId
    )
      throw new SubscriptionError(
        'FENCED',
        `The wake is stale: generation ${String(b.generation)} of wake ${JSON.stringify(b.wake_id)}, the subscription is at ${sub.generation}`,
      )
  }

  /** Acks of `[{ stream, offset }]`: all checked first, then all stored, or none. */
  private async applyAcks(sub: Subscription, acks: unknown): Promise<void> {
    if (acks === undefined || acks === null) return
    if (!Array.isArray(acks)) throw new SubscriptionError('INVALID_REQUEST', 'acks must be an array')
    const moves: Array<[StoredLink, string]> = []
    for (const a of acks as Array<{ stream?: unknown; path?: unknown; offset?: unknown }>) {
      const raw = a?.stream ?? a?.path
      const path = typeof raw === 'string' ? trimSlashes(raw) : ''
      const link = sub.links.get(path)
      if (link === undefined)
        throw new SubscriptionError(
          'INVALID_OFFSET',
          `An ack names ${JSON.stringify(raw)}, not a stream of the subscription`,
        )
      const offset = a.offset
      if (!isOffsetToken(offset))
        throw new SubscriptionError(
          'INVALID_OFFSET',
          `An ack's offset must be a Stream-Next-Offset token, got ${JSON.stringify(offset)}`,
        )
      if (compareTokens(offset, link.acked) < 0)
        throw new SubscriptionError('INVALID_OFFSET', `The ack of ${path} at ${offset} goes back from ${link.acked}`)
      const tail = (await streamEnds(this.ctx, path)).tail
      if (compareTokens(offset, tail) > 0)
        throw new SubscriptionError('INVALID_OFFSET', `The ack of ${path} at ${offset} is past its tail ${tail}`)
      moves.push([link, offset])
    }
    for (const [link, offset] of moves) link.acked = offset
    if (moves.length > 0) await this.log.save(sub.stored())
  }

  /** Wake the subscription if it has pending work and no wake; whether it did. */
  private async maybeWake(sub: Subscription): Promise<boolean> {
    if (this.closed || sub.deleted || sub.wakeId !== undefined || sub.holder !== undefined) return false
    const infos = await streamInfos(this.ctx, sub)
    const pending = infos.find((s) => s.has_pending)
    if (pending === undefined) return false
    // No wake stream yet: nobody could learn of a wake (a claim still finds the work).
    const wakeStream = sub.config.wakeStream
    if (wakeStream !== undefined && !(await streamEnds(this.ctx, wakeStream)).exists) return false
    await this.createWake(sub, infos, pending.path)
    return true
  }

  /** Begin a wake (`claimed`: for a worker's claim, which needs no wake event to learn of it). */
  private async createWake(sub: Subscription, infos: StreamInfo[], trigger: string, claimed = false): Promise<void> {
    // Stored before the wake begins, so a restarted gateway goes on with a later generation; a
    // failed write begins no wake (the next poke or sweep tries again), and the number is not
    // used again either way.
    sub.generation++
    await this.log.save(sub.stored())
    sub.wakeId = `w_${randomBytes(12).toString('hex')}`
    sub.snapshot = new Map(infos.map((s) => [s.path, s.tail_offset]))
    if (sub.config.type === 'pull-wake') {
      try {
        await this.writeWake(sub.config.wakeStream as string, {
          type: 'wake',
          subscription_id: sub.id,
          stream: trigger,
          generation: sub.generation,
          ts: Date.now(),
        })
      } catch {
        // No wake stream to tell (missing, closed, not JSON): no worker can learn of this wake, so
        // it ends, and the next look (a poke or the sweep) makes another. A claim still finds the work.
        if (!claimed) sub.endWake()
      }
      return
    }
    sub.token = this.keys.token(sub.subject, sub.generation)
    this.extendLease(sub)
    this.deliver(sub, {
      subscription_id: sub.id,
      wake_id: sub.wakeId,
      generation: sub.generation,
      streams: infos,
      callback_url: this.url(sub, 'callback'),
      callback_token: sub.token,
    })
  }

  /** POST the wake to the webhook until it answers 2xx (or the wake is over); `{ done: true }` acks its snapshot. */
  private deliver(sub: Subscription, wake: Delivery): void {
    const attempt = async (): Promise<void> => {
      if (this.closed || sub.wakeId !== wake.wake_id) return
      const answer = await deliverWake((sub.config.webhook as { url: string }).url, wake, this.keys, this.stop.signal)
      if (answer === undefined) {
        if (this.closed || sub.wakeId !== wake.wake_id) return
        sub.retries++
        sub.status = 'failed'
        const base = Math.min(1000 * 2 ** (sub.retries - 1), MAX_RETRY_MS)
        sub.retryTimer = setTimeout(
          () => this.ctx.background(attempt()),
          Math.round(base * (0.8 + 0.4 * Math.random())),
        )
        sub.retryTimer.unref()
        return
      }
      sub.status = 'active'
      sub.retries = 0
      if (!answer.done) return
      await this.run(sub, async () => {
        if (sub.wakeId !== wake.wake_id) return
        for (const [path, tail] of sub.snapshot) {
          const link = sub.links.get(path)
          if (link !== undefined && compareTokens(tail, link.acked) > 0) link.acked = tail
        }
        sub.endWake()
        await this.log.save(sub.stored())
        await this.maybeWake(sub)
      })
    }
    this.ctx.background(attempt())
  }

  /** (Re)start the wake's lease: when it runs out, the wake ends and a new one begins if work is pending. */
  private extendLease(sub: Subscription): void {
    if (sub.leaseTimer !== undefined) clearTimeout(sub.leaseTimer)
    const wakeId = sub.wakeId
    const lease = ++sub.leases // a timer that fired while an ack extended the lease is stale
    sub.leaseTimer = setTimeout(() => {
      this.ctx.background(
        this.run(sub, async () => {
          if (sub.wakeId !== wakeId || sub.leases !== lease) return
          sub.endWake()
          await this.maybeWake(sub)
        }),
      )
    }, sub.config.leaseTtlMs)
    sub.leaseTimer.unref()
  }

  // --- streams ---

  private link(sub: Subscription, path: string, how: 'explicit' | 'glob', acked: string): void {
    if (path === sub.config.wakeStream) return // its own wake events would wake it again, forever
    let l = sub.links.get(path)
    if (l === undefined) {
      l = { path, explicit: false, glob: false, acked }
      sub.links.set(path, l)
      this.watch(sub, path)
    }
    l[how] = true
  }

  private unlink(sub: Subscription, path: string): void {
    sub.links.delete(path)
    sub.unwatch.get(path)?.()
    sub.unwatch.delete(path)
  }

  /** Appends to the stream, by whoever wrote them, poke the subscription. */
  private watch(sub: Subscription, path: string): void {
    if (this.closed || sub.deleted || sub.unwatch.has(path)) return
    try {
      sub.unwatch.set(
        path,
        this.ctx.store.watch(parseStreamName(path).topic, 0, () => this.poke(sub), false),
      )
    } catch {
      /* the sweep looks at it */
    }
  }

  /** Look for pending work soon (once, however many pokes come meanwhile). */
  private poke(sub: Subscription): void {
    if (this.closed || sub.deleted || this.poking.has(sub)) return
    this.poking.add(sub)
    setImmediate(() => {
      this.poking.delete(sub)
      this.ctx.background(this.run(sub, () => this.maybeWake(sub)))
    })
  }

  private async sweep(): Promise<void> {
    if (this.closed || this.subs.size === 0) return
    const patterned = [...this.subs.values()].filter((s) => s.config.pattern !== undefined)
    const paths = patterned.length === 0 ? [] : await streamPaths(this.ctx.store)
    for (const sub of this.subs.values()) {
      // Never its own wake stream (patternTakes): finding it again would save the subscription every sweep.
      const fresh = paths.filter((p) => !sub.links.has(p) && sub.patternTakes(p))
      if (fresh.length > 0)
        await this.run(sub, async () => {
          if (sub.deleted) return
          for (const p of fresh) if (!sub.links.has(p)) this.link(sub, p, 'glob', '-1')
          await this.log.save(sub.stored())
        })
      for (const p of sub.links.keys()) this.watch(sub, p) // streams that did not exist when linked
      this.poke(sub)
    }
  }

  // --- bookkeeping ---

  private async pullWake(id: string): Promise<Subscription> {
    const sub = await this.get(id)
    if (sub.config.type !== 'pull-wake')
      throw new SubscriptionError(
        'INVALID_REQUEST',
        `Subscription ${JSON.stringify(id)} is not a pull-wake subscription`,
      )
    return sub
  }

  /** Run `fn` after the subscription's earlier operations (one at a time, in order). */
  private run<T>(sub: Subscription, fn: () => Promise<T>): Promise<T> {
    const r = sub.chain.then(() => {
      if (sub.deleted) throw notFound(sub.id) // deleted while this waited its turn
      return fn()
    })
    sub.chain = r.catch(() => undefined)
    return r
  }

  private forget(sub: Subscription): void {
    sub.deleted = true
    this.quiet(sub)
    sub.links.clear()
    if (this.subs.get(sub.id) === sub) this.subs.delete(sub.id)
  }

  private quiet(sub: Subscription): void {
    sub.endWake()
    if (sub.retryTimer !== undefined) clearTimeout(sub.retryTimer)
    for (const u of sub.unwatch.values()) u()
    sub.unwatch.clear()
  }

  private url(sub: Subscription, what: 'callback' | 'jwks'): string {
    const base = `${sub.origin}${this.ctx.options.basePath}/__ds`
    return what === 'jwks' ? `${base}/jwks.json` : `${base}/subscriptions/${encodeURIComponent(sub.id)}/callback`
  }
}

const attached = new WeakMap<GatewayContext, Subscriptions>()

/** The subscriptions of a gateway's context (undefined: off). */
export const subscriptionsOf = (ctx: GatewayContext): Subscriptions | undefined => attached.get(ctx)

const notFound = (id: string): SubscriptionError =>
  new SubscriptionError('SUBSCRIPTION_NOT_FOUND', `No subscription ${JSON.stringify(id)}`)
