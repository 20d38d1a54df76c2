/**
 * A raw Durable Streams SSE reader for tests: `fetch` + an SSE parser (no client library, so a
 * test sees exactly when a response ends and which offset it resumes from).
 */

export interface SseReader {
  /** JSON items of every `event: data` so far, in order. */
  readonly items: unknown[]
  /** The items up to the last `event: control` (what a client has committed to: its offset covers them). */
  readonly confirmed: () => unknown[]
  /** `streamNextOffset` of the last `event: control`. */
  readonly lastOffset: () => string | undefined
  /** Whether the last control said `upToDate`. */
  readonly upToDate: () => boolean
  /** Resolves when the response body has ended (or failed): `'ended'` or the error's message. */
  readonly ended: Promise<string>
  abort(): void
}

/** Read `<streamUrl>?offset=<offset>&live=sse`, collecting the JSON items of a JSON stream. */
export async function readSse(streamUrl: string, offset: string): Promise<SseReader> {
  const abort = new AbortController()
  const response = await fetch(`${streamUrl}?offset=${encodeURIComponent(offset)}&live=sse`, { signal: abort.signal })
  if (response.status !== 200 || !response.body)
    throw new Error(`SSE ${streamUrl} offset ${offset}: status ${response.status}`)
  const items: unknown[] = []
  let last: string | undefined
  let upToDate = false
  let confirmedCount = 0
  const onEvent = (event: string, data: string) => {
    if (event === 'data') items.push(...(JSON.parse(data) as unknown[]))
    else if (event === 'control') {
      const c = JSON.parse(data) as { streamNextOffset: string; upToDate?: boolean }
      last = c.streamNextOffset
      upToDate = c.upToDate === true
      confirmedCount = items.length
    }
  }
  const pump = async (): Promise<string> => {
    const decoder = new TextDecoder()
    let buffer = ''
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true })
        let end: number
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          let event = 'message'
          const data: string[] = []
          for (const line of block.split('\n')) {
            if (line.startsWith('event:')) event = line.slice(6).trim()
            else if (line.startsWith('data:')) data.push(line.slice(5))
          }
          if (data.length > 0) onEvent(event, data.join('\n'))
        }
      }
      return 'ended'
    } catch (e) {
      return (e as Error).message
    }
  }
  return {
    items,
    confirmed: () => items.slice(0, confirmedCount),
    lastOffset: () => last,
    upToDate: () => upToDate,
    ended: pump(),
    abort: () => abort.abort(),
  }
}
