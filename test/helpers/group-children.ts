import type { ChildProcess } from 'node:child_process'

/** A child's output lines, each with the time it arrived. */
export interface Out {
  lines: string[]
  times: number[]
  stderr: () => string
}

/** Collect a child's stdout lines with arrival times, and its stderr. */
export function watch(child: ChildProcess): Out {
  const out: Out = { lines: [], times: [], stderr: () => err }
  let partial = ''
  let err = ''
  child.stdout?.setEncoding('utf8').on('data', (d: string) => {
    partial += d
    const parts = partial.split('\n')
    partial = parts.pop() ?? ''
    for (const l of parts) {
      if (!l) continue
      out.lines.push(l)
      out.times.push(Date.now())
    }
  })
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (err += d))
  return out
}
