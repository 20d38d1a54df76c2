import type { Backend } from '../backends/backend.js'

/**
 * With `from: 'end'`, each topic's end offsets as they are when `consumer()` is called: asked for
 * now (synchronously where the backend can, else ordered before this instance's later appends,
 * `Backend.endOffsetsSnapshot`), so a message sent right after `consumer()` returns is delivered.
 * Resolves with the topics whose ends are known; a missing topic is left out (the member's start
 * reports it). Resolves with an empty map for `from: 'start'`.
 */
export function endsAtCreation(
  store: Backend,
  topics: readonly string[],
  from: 'start' | 'end',
): Promise<Map<string, number[]>> {
  const asked = from === 'end' ? topics.map((t) => [t, store.endOffsetsSnapshot(t)] as const) : []
  return (async () => {
    const ends = new Map<string, number[]>()
    for (const [topic, e] of asked) {
      const got = await Promise.resolve(e).catch(() => undefined)
      if (got) ends.set(topic, got)
    }
    return ends
  })()
}
