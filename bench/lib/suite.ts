/** Options every suite receives from `bench/run.ts`. */
export interface SuiteOptions {
  /** Messages per throughput phase. */
  messages: number
  /** Value size in bytes. */
  size: number
  /** Messages in each cross-process tail-latency run. */
  tailMessages: number
  /** Rounds of the throughput phases (the median is reported). */
  repeat: number
  /** The command line, as printed in the report. */
  command: string
}

/** A benchmark suite: one file under bench/suites/ default-exports one of these. */
export interface Suite {
  name: string
  description: string
  run(options: SuiteOptions): Promise<void>
}
