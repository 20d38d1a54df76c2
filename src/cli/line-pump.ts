import { createInterface } from 'node:readline'

/** Lines sent per write; all sends of one chunk are issued in one tick, so the producer batches them. */
const CHUNK = 2000
/** Stop reading stdin while this many lines wait for the write in flight. */
const MAX_PENDING = 4 * CHUNK

export interface PumpResult {
  /** Lines sent successfully. */
  count: number
  /** Why the pump stopped early: a line `parse` refused, or a failed send. */
  error?: unknown
}

/**
 * Read `input` line by line, turn each non-empty line into an item with `parse`, and hand the items to
 * `send` in chunks, one chunk at a time (so the order of lines is the order of offsets). Reading goes
 * on while a chunk is written. A line `parse` rejects ends the input; the lines before it are still
 * sent. A failed send stops everything after it. SIGINT/SIGTERM end the input like EOF.
 */
export function pumpLines<T>(
  input: NodeJS.ReadableStream,
  parse: (line: string, lineNo: number) => T,
  send: (items: T[]) => Promise<{ ok: number; error?: unknown }>,
): Promise<PumpResult> {
  return new Promise((resolve) => {
    const rl = createInterface({ input, crlfDelay: Infinity })
    let pending: T[] = []
    let busy = false
    let ended = false
    let scheduled = false
    let abandoned = false
    let lineNo = 0
    const result: PumpResult = { count: 0 }
    const fail = (e: unknown) => {
      if (!('error' in result)) result.error = e
      end()
    }
    const end = () => {
      if (ended) return
      ended = true
      process.off('SIGINT', end)
      process.off('SIGTERM', end)
      rl.close()
      issue()
    }
    const issue = () => {
      scheduled = false
      if (busy) return
      if (abandoned) pending = []
      if (pending.length === 0) {
        if (ended) {
          // Let go of stdin (a pipe left open upstream must not keep us alive).
          ;(input as NodeJS.ReadStream).pause?.()
          ;(input as NodeJS.ReadStream).unref?.()
          resolve(result)
        }
        return
      }
      const items = pending.length > CHUNK ? pending.splice(0, CHUNK) : pending
      if (items === pending) pending = []
      if (!ended && pending.length < MAX_PENDING) rl.resume()
      busy = true
      send(items)
        .then(
          ({ ok, error }) => {
            result.count += ok
            if (error !== undefined) {
              abandoned = true
              fail(error)
            }
          },
          (e: unknown) => {
            abandoned = true
            fail(e)
          },
        )
        .finally(() => {
          busy = false
          issue()
        })
    }
    rl.on('line', (line) => {
      if (ended) return
      lineNo++
      if (line === '') return
      let item: T
      try {
        item = parse(line, lineNo)
      } catch (e) {
        fail(e)
        return
      }
      pending.push(item)
      if (pending.length >= MAX_PENDING) rl.pause()
      if (pending.length >= CHUNK) issue()
      else if (!scheduled) {
        scheduled = true
        setImmediate(issue)
      }
    })
    rl.on('close', end)
    process.once('SIGINT', end)
    process.once('SIGTERM', end)
  })
}
