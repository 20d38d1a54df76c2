import { createInterface } from 'node:readline'

/** How long a non-interactive stdin may stay silent before a confirmation counts as refused. */
const PIPE_TIMEOUT_MS = 30_000

/**
 * Ask a question on stderr and read one line from stdin. Resolves with `undefined` on end of input
 * (EOF, `</dev/null`, a closed pipe) and, when stdin is not a terminal, after 30 s of silence, so a
 * script never hangs on a prompt.
 */
export function askLine(question: string, input: NodeJS.ReadStream = process.stdin): Promise<string | undefined> {
  return new Promise((resolve) => {
    const rl = createInterface({ input, output: process.stderr, terminal: Boolean(input.isTTY) })
    let settled = false
    const timer = input.isTTY ? undefined : setTimeout(() => finish(undefined), PIPE_TIMEOUT_MS)
    const finish = (answer: string | undefined) => {
      if (settled) return
      settled = true
      if (timer) clearTimeout(timer)
      if (!input.isTTY) process.stderr.write('\n') // nothing was echoed: end the prompt's line
      rl.close()
      // Let go of stdin so it does not keep the process alive.
      input.pause()
      input.unref?.()
      resolve(answer)
    }
    rl.once('line', (line) => finish(line))
    rl.once('close', () => finish(undefined))
    rl.setPrompt(question)
    rl.prompt()
  })
}
