export interface MemorySample {
  /** ms since the sampler started */
  t: number
  rss: number
  heapUsed: number
}

export interface MemoryReport {
  start: MemorySample
  end: MemorySample
  peakRss: number
  peakHeapUsed: number
  samples: MemorySample[]
}

/**
 * Samples `process.memoryUsage()` every `intervalMs` while a phase runs (the phase must yield to
 * the event loop now and then, which any async read does).
 */
export class MemorySampler {
  private readonly samples: MemorySample[] = []
  private timer: NodeJS.Timeout | undefined
  private t0 = 0

  constructor(private readonly intervalMs = 50) {}

  private sample(): MemorySample {
    const m = process.memoryUsage()
    const s = { t: performance.now() - this.t0, rss: m.rss, heapUsed: m.heapUsed }
    this.samples.push(s)
    return s
  }

  start(): this {
    this.t0 = performance.now()
    this.sample()
    this.timer = setInterval(() => this.sample(), this.intervalMs)
    return this
  }

  stop(): MemoryReport {
    if (this.timer) clearInterval(this.timer)
    this.timer = undefined
    const end = this.sample()
    let peakRss = 0
    let peakHeapUsed = 0
    for (const s of this.samples) {
      if (s.rss > peakRss) peakRss = s.rss
      if (s.heapUsed > peakHeapUsed) peakHeapUsed = s.heapUsed
    }
    return { start: this.samples[0] as MemorySample, end, peakRss, peakHeapUsed, samples: this.samples }
  }
}

/** RSS at `points` evenly spaced moments of a sampled phase, in MiB (to show whether it stays flat). */
export function rssTimeline(r: MemoryReport, points = 8): number[] {
  const s = r.samples
  const out: number[] = []
  for (let i = 0; i < points; i++) {
    const idx = Math.round((i / (points - 1)) * (s.length - 1))
    out.push(Math.round((s[idx] as MemorySample).rss / (1024 * 1024)))
  }
  return out
}

/**
 * Run a full garbage collection (so a memory measurement does not start with the previous phase's
 * garbage) when the process has `global.gc`; `bench/run.ts` re-runs itself with --expose-gc for
 * that (enabling the flag at run time with v8.setFlagsFromString is unsupported once V8 runs).
 * Returns false without `global.gc`.
 */
export function fullGc(): boolean {
  const gc = (globalThis as { gc?: () => void }).gc
  if (typeof gc !== 'function') return false
  gc()
  return true
}
