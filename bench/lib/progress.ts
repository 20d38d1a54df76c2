import cliProgress from 'cli-progress'

export interface Progress {
  update(done: number): void
  stop(): void
}

const quiet: Progress = { update: () => undefined, stop: () => undefined }

/**
 * A progress bar on stderr for a long phase when stderr is a TTY; nothing otherwise (the phase's
 * result line is printed on stdout either way, so logs stay readable).
 */
export function progress(label: string, total: number): Progress {
  if (!process.stderr.isTTY) return quiet
  const bar = new cliProgress.SingleBar(
    {
      format: `  ${label.padEnd(34)} [{bar}] {percentage}% | {value}/{total} | {duration_formatted}`,
      hideCursor: true,
      clearOnComplete: true,
      stopOnComplete: false,
      fps: 10,
      etaBuffer: 50,
    },
    cliProgress.Presets.shades_classic,
  )
  bar.start(total, 0)
  return {
    update: (n) => bar.update(n),
    stop: () => bar.stop(),
  }
}
