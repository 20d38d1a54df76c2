import type { Backend } from '../../backends/backend.js'
import { readOverview, type StoreOverview } from './overview.js'

/** How far back rates look: messages written over (at most) this window, per second. */
const RATE_WINDOW_MS = 5_000

export type StatsListener = (snapshot: StoreOverview | Error) => void

/**
 * The gateway's store sampler (decision 143): takes an overview of the store every `intervalMs`
 * while at least one live viewer (`GET /v1/live`) is subscribed, and only then; the tick starts
 * with the first viewer and stops when the last one leaves. One sample serves every viewer. It keeps
 * the end offsets of recent samples to give each partition a message rate.
 */
export class StatsHub {
  private readonly listeners = new Set<StatsListener>()
  private timer: ReturnType<typeof setInterval> | undefined
  private inFlight: Promise<StoreOverview> | undefined
  /** Recent samples of each partition's end: key `topic\0p` → [at, end][] oldest first. */
  private readonly history = new Map<string, Array<[number, number]>>()

  constructor(
    private readonly store: Backend,
    private readonly intervalMs: number,
  ) {}

  /** Whether the sampling tick is running (there are viewers). */
  get running(): boolean {
    return this.timer !== undefined
  }

  /** Add a viewer: it gets a sample at once and then every tick; returns its unsubscribe. */
  subscribe(listener: StatsListener): () => void {
    this.listeners.add(listener)
    if (!this.timer) {
      this.timer = setInterval(() => void this.tick(), this.intervalMs)
      this.timer.unref?.()
    }
    void this.sample().then(
      (s) => this.listeners.has(listener) && listener(s),
      (e: unknown) => this.listeners.has(listener) && listener(e instanceof Error ? e : new Error(String(e))),
    )
    return () => {
      this.listeners.delete(listener)
      if (this.listeners.size === 0 && this.timer) {
        clearInterval(this.timer)
        this.timer = undefined
      }
    }
  }

  /** Take an overview now (one at a time: callers during a sample share it), rates filled in. */
  sample(): Promise<StoreOverview> {
    this.inFlight ??= readOverview(this.store)
      .then((o) => this.withRates(o))
      .finally(() => (this.inFlight = undefined))
    return this.inFlight
  }

  private async tick(): Promise<void> {
    if (this.inFlight) return // a slow store: skip a tick rather than queue samples
    let out: StoreOverview | Error
    try {
      out = await this.sample()
    } catch (e) {
      out = e instanceof Error ? e : new Error(String(e))
    }
    for (const l of [...this.listeners]) l(out)
  }

  private withRates(o: StoreOverview): StoreOverview {
    const seen = new Set<string>()
    for (const t of o.topics) {
      let sum: number | null = 0
      for (const p of t.partitions) {
        const key = `${t.topic}\0${p.partition}`
        seen.add(key)
        const h = this.history.get(key) ?? []
        while (
          h.length > 0 &&
          (o.at - (h[0] as [number, number])[0] > RATE_WINDOW_MS || (h[0] as [number, number])[1] > p.end)
        )
          h.shift()
        const first = h[0]
        p.rate = first && o.at > first[0] ? Math.round(((p.end - first[1]) * 1000 * 10) / (o.at - first[0])) / 10 : null
        h.push([o.at, p.end])
        this.history.set(key, h)
        sum = sum === null || p.rate === null ? null : sum + p.rate
      }
      t.rate = sum === null ? null : Math.round(sum * 10) / 10
    }
    for (const key of this.history.keys()) if (!seen.has(key)) this.history.delete(key)
    return o
  }
}
