/** Nearest-rank percentile of an ascending-sorted array (p in 0..100). */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN
  const rank = Math.ceil((p / 100) * sorted.length)
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))] as number
}

export interface LatencySummary {
  count: number
  min: number
  p50: number
  p90: number
  p99: number
  max: number
  mean: number
}

export function summarise(samples: readonly number[]): LatencySummary {
  const s = [...samples].sort((a, b) => a - b)
  const mean = s.reduce((a, b) => a + b, 0) / (s.length || 1)
  return {
    count: s.length,
    min: s[0] ?? NaN,
    p50: percentile(s, 50),
    p90: percentile(s, 90),
    p99: percentile(s, 99),
    max: s[s.length - 1] ?? NaN,
    mean,
  }
}

/** The median (the lower one of an even count). */
export const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[(xs.length - 1) >> 1] as number

export const MiB = 1024 * 1024
export const MB = 1_000_000

export function fmtInt(n: number): string {
  return Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '-'
}

export function fmtNum(n: number, digits = 2): string {
  return Number.isFinite(n) ? n.toFixed(digits) : '-'
}

export function fmtMiB(bytes: number): string {
  return `${(bytes / MiB).toFixed(1)} MiB`
}

/**
 * Milliseconds on the machine's monotonic clock (Linux CLOCK_MONOTONIC, through `process.hrtime`):
 * the same clock in every process of the machine, so a time taken in one process and compared in
 * another measures the latency between them. Not `performance.timeOrigin + performance.now()`:
 * each process fixes its own `timeOrigin` from the wall clock at start, and two processes' origins
 * can disagree by more than a fast tail's latency (a tail p50 came out at -0.066 ms that way).
 */
export const machineNow = (): number => Number(process.hrtime.bigint()) / 1e6

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))
