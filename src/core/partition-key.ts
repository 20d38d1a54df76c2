declare const brand: unique symbol

/**
 * A partition of a topic as a map or record key, `"<topic>/<partition>"`. Branded so that only
 * `partitionKey` makes one: a hand-built string (in another order, or with a number that is not a
 * partition) does not type-check where a key is expected.
 */
export type PartitionKey = string & { readonly [brand]: true }

/** The key of `topic`'s `partition`. */
export const partitionKey = (topic: string, partition: number): PartitionKey => `${topic}/${partition}` as PartitionKey

/** The topic and partition a key names (topic names never contain '/', so the last one splits). */
export function splitPartitionKey(key: PartitionKey | string): { topic: string; partition: number } {
  const i = key.lastIndexOf('/')
  return { topic: key.slice(0, i), partition: Number(key.slice(i + 1)) }
}
