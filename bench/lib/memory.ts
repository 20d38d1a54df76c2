import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

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

let gcFn: (() => void) | undefined

/**
 * Run a full garbage collection, so a memory measurement does not start with the garbage of the
 * previous phase. Uses `global.gc` when the process has it (--expose-gc), else enables it at run
 * time through the V8 flag (a benchmark-only trick). Returns false if neither works.
 */
export function fullGc(): boolean {
  if (!gcFn) {
    const g = (globalThis as { gc?: () => void }).gc
    if (typeof g === 'function') gcFn = g
    else {
      try {
        setFlagsFromString('--expose-gc')
        gcFn = runInNewContext('gc') as () => void
      } catch {
        return false
      }
    }
  }
  gcFn()
  return true
}
