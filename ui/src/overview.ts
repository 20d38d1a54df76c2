// The gateway's live store overview (GET /v1/live, an SSE stream of `snapshot` events), read with
// fetch so the bearer token can go in a header. Reconnects after a drop (gateway restart, periodic
// close) with a short backoff; a 401/403 is reported and not retried (the token must change).

export interface PartitionRow {
  partition: number
  stream: string
  start: number
  end: number
  rate: number | null
}
export interface TopicRow {
  topic: string
  partitionCount: number
  createdAt: number
  partitions: PartitionRow[]
  rate: number | null
}
export interface GroupPartitionRow {
  topic: string
  partition: number
  stream: string
  committed: number
  end: number
  lag: number
  /** Age in ms of the oldest message not committed (0 when caught up). */
  lagMs: number
  pending?: number
}
export interface GroupRow {
  group: string
  members: Array<{ id: string; name: string; assignments: Array<{ topic: string; partition: number }> }>
  partitions: GroupPartitionRow[]
  lag: number
  /** The oldest partition's `lagMs`. */
  lagMs: number
}
export interface Snapshot {
  at: number
  topics: TopicRow[]
  groups: GroupRow[]
}

export interface OverviewHandlers {
  snapshot(s: Snapshot): void
  /** `fatal`: refused (401/403), not retried. */
  error(message: string, fatal: boolean): void
  connected(): void
}

export class RefusedError extends Error {}

async function readOnce(headers: Record<string, string>, on: OverviewHandlers, signal: AbortSignal): Promise<void> {
  const res = await fetch('./v1/live', { headers, signal, cache: 'no-store' })
  if (res.status === 401 || res.status === 403)
    throw new RefusedError(
      `${res.status === 401 ? 'Unauthorized' : 'Forbidden'} (${res.status}): ${(await res.text()).trim()}`,
    )
  if (!res.ok || !res.body) throw new Error(`GET /v1/live answered ${res.status}: ${(await res.text()).trim()}`)
  on.connected()
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader()
  let text = ''
  for (;;) {
    const { done, value } = await reader.read()
    if (done) return
    text += value
    let i: number
    while ((i = text.indexOf('\n\n')) >= 0) {
      const block = text.slice(0, i)
      text = text.slice(i + 2)
      let event = 'message'
      let data = ''
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) event = line.slice(6).trim()
        else if (line.startsWith('data:')) data += line.slice(5)
      }
      if (event === 'snapshot') on.snapshot(JSON.parse(data) as Snapshot)
      else if (event === 'error')
        on.error(`The gateway could not read the store: ${(JSON.parse(data) as { message: string }).message}`, false)
    }
  }
}

/** Follow the live overview until `signal` aborts. */
export async function followOverview(
  token: string | undefined,
  on: OverviewHandlers,
  signal: AbortSignal,
): Promise<void> {
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {}
  let backoff = 250
  while (!signal.aborted) {
    try {
      await readOnce(headers, on, signal)
      backoff = 250
    } catch (e) {
      if (signal.aborted) return
      if (e instanceof RefusedError) return on.error(e.message, true)
      on.error(`Lost the gateway (${(e as Error).message}); reconnecting…`, false)
    }
    await new Promise((r) => setTimeout(r, backoff))
    backoff = Math.min(backoff * 2, 5_000)
  }
}
