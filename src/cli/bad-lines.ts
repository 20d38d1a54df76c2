import { MessageTooLargeError, ValidationError } from '../index.js'

/** A line that is not valid JSON under `--json` or `--type`. */
export class InvalidJsonError extends Error {
  readonly code = 'ERR_INVALID_JSON'
}

/** A stdin line `produce` could not send: printed as `<its error's code>: line N: <why>`. */
export class LineError extends Error {
  readonly code: string

  constructor(
    readonly line: number,
    readonly reason: unknown,
    note = '',
  ) {
    super(`line ${line}: ${reason instanceof Error ? reason.message : String(reason)}${note}`, { cause: reason })
    const code = (reason as { code?: unknown } | null)?.code
    this.code = typeof code === 'string' ? code : 'ERR_UNEXPECTED'
  }
}

/** `produce --skip-bad` skipped lines: exit 1 after the rest was sent. */
export class LinesSkippedError extends Error {
  readonly code = 'ERR_LINES_SKIPPED'

  constructor(readonly lines: number[]) {
    const list = lines.length > 20 ? `${lines.slice(0, 20).join(', ')}, …` : lines.join(', ')
    super(
      `${lines.length} bad line${lines.length === 1 ? ' was' : 's were'} skipped (line${lines.length === 1 ? '' : 's'} ${list})`,
    )
  }
}

/** Errors of one line's value, not of the run: the next line may well be sent. */
export const isLineError = (e: unknown): boolean =>
  e instanceof MessageTooLargeError || e instanceof ValidationError || e instanceof InvalidJsonError

/**
 * Send `items` in order with `sendBatch`, which validates a whole batch before it writes any of it.
 * When a line error refuses the batch, its halves are sent in turn to find the first bad item:
 * what precedes it is written, nothing after it. Returns the bad item's index (undefined when all
 * were sent); `progress.sent` counts what was written, also when another error is thrown.
 */
export async function sendUntilBad<T>(
  items: T[],
  sendBatch: (items: T[]) => Promise<unknown>,
  progress: { sent: number },
): Promise<{ index: number; error: unknown } | undefined> {
  if (items.length === 0) return undefined
  try {
    await sendBatch(items)
    progress.sent += items.length
    return undefined
  } catch (e) {
    if (!isLineError(e)) throw e
    if (items.length === 1) return { index: 0, error: e }
    const mid = items.length >>> 1
    const left = await sendUntilBad(items.slice(0, mid), sendBatch, progress)
    if (left) return left
    const right = await sendUntilBad(items.slice(mid), sendBatch, progress)
    return right && { index: mid + right.index, error: right.error }
  }
}
