import { Cluster } from 'ioredis'
import { BackendError } from '../../core/errors.js'
import type { Client } from './connection.js'
import { keySlot } from './key-slot.js'

/** Candidate hash tags tried per master before giving up (a tag lands on one of M masters with chance ≈ 1/M). */
const MAX_TRIES = 10_000

/**
 * The masters of a Cluster client's slot map, each with the slots it serves ("host:port" → slot
 * test), in a stable order; empty on one Redis.
 */
function masters(client: Client): string[] {
  if (!(client instanceof Cluster)) return []
  const seen = new Set<string>()
  for (const nodes of client.slots) if (nodes?.[0]) seen.add(nodes[0])
  return [...seen].sort()
}

/**
 * The hash tags of a new topic's partitions on a Cluster (docs/format.md, "Redis layout"):
 * partition p goes to the master with the fewest of this topic's partitions (round robin from a
 * master picked by the topic name, so one-partition topics spread too), and every partition of the
 * topic on one master shares one tag `<topic>:s<k>` whose slot that master serves. Partitions on
 * one master thus share one slot, so one blocking read serves all of them (watcher.ts). Undefined
 * on one Redis: there the layout stays `{<topic>:<partition>}`.
 */
export function placeTopic(client: Client, topic: string, partitions: number): string[] | undefined {
  const nodes = masters(client)
  if (nodes.length === 0 || !(client instanceof Cluster)) return undefined
  const tagOf = new Map<string, string>()
  let k = 0
  for (const node of nodes) {
    for (let tries = 0; !tagOf.has(node); tries++, k++) {
      if (tries >= MAX_TRIES)
        throw new BackendError(
          `No hash tag for topic "${topic}" lands on Cluster master ${node} (after ${MAX_TRIES} tries)`,
        )
      const tag = `${topic}:s${k}`
      const owner = client.slots[keySlot(`{${tag}}`)]?.[0]
      if (owner && !tagOf.has(owner)) tagOf.set(owner, tag)
    }
  }
  const first = keySlot(topic) % nodes.length
  return Array.from({ length: partitions }, (_, p) => tagOf.get(nodes[(first + p) % nodes.length] as string) as string)
}
