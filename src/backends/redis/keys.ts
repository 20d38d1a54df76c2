/**
 * The Redis key layout (docs/format.md, "Redis layout"). Every key of one partition carries one
 * hash tag, so a script only ever touches one Cluster slot: `{<topic>:<partition>}`, or, for a
 * topic placed on a Cluster at creation (placement.ts, the meta's `tags`), `{<tag>}:<partition>`
 * where the partitions of the topic on one master share their tag. Group-level keys carry `{<group>}` and are used by their own
 * commands, never in a script with partition keys. Topic and group names cannot contain `{`, `}`
 * or `:`, so keys never collide.
 */
export class RedisKeys {
  /** Per placed topic: the hash tag of each partition (from its meta; absent = `{<topic>:<partition>}`). */
  private readonly tags = new Map<string, readonly string[]>()

  constructor(readonly prefix: string) {}

  /** Record the placement of a topic as its meta says (undefined: the per-partition layout). */
  place(topic: string, tags: readonly string[] | undefined): void {
    if (tags) this.tags.set(topic, tags)
    else this.tags.delete(topic)
  }

  /** SET of topic names. */
  topics(): string {
    return `${this.prefix}topics`
  }

  /** HASH: a topic's configuration and creation state. */
  meta(topic: string): string {
    return `${this.prefix}${topic}:meta`
  }

  /** STRING: the topic's last access in ms (markAccess; the gateway's sliding TTLs). */
  accessed(topic: string): string {
    return `${this.prefix}${topic}:accessed`
  }

  /** STREAM of a partition: entry ID `<offset>-1`, fields `r` (record) and `p` (producer id). */
  stream(topic: string, partition: number): string {
    const tag = this.tags.get(topic)?.[partition]
    return tag === undefined ? `${this.prefix}{${topic}:${partition}}` : `${this.prefix}{${tag}}:${partition}`
  }

  /** STRING: next offset to be written. Its existence marks the partition as existing. */
  end(topic: string, partition: number): string {
    return `${this.stream(topic, partition)}:end`
  }

  /** STRING: first retained offset (absent = 0). */
  start(topic: string, partition: number): string {
    return `${this.stream(topic, partition)}:start`
  }

  /** HASH: producer instance → last applied batch sequence numbers and their base offsets. */
  producers(topic: string, partition: number): string {
    return `${this.stream(topic, partition)}:producers`
  }

  /** STRING: an append spanning several script calls holds the partition (`<token> <deadline ms>`). */
  reservation(topic: string, partition: number): string {
    return `${this.stream(topic, partition)}:resv`
  }

  /**
   * HASH: the partition's remembered idempotency ids (`appendIdempotent`), the current generation:
   * id → `<offset> <ms stored>`, and the field `''` → `<ms it began> <longest window asked>`, which
   * keeps it existing.
   */
  ids(topic: string, partition: number): string {
    return `${this.stream(topic, partition)}:ids`
  }

  /** HASH: the previous generation of the remembered ids (see append-ids-7.lua), same fields as `ids`. */
  idsBefore(topic: string, partition: number): string {
    return `${this.stream(topic, partition)}:ids0`
  }

  /** HASH: the sources of a processor's outputs stored in the partition (append-src-7.lua): source → `<epoch> <floor>`. */
  sources(topic: string, partition: number): string {
    return `${this.stream(topic, partition)}:src`
  }

  /** SORTED SET: the outputs of one source stored in the partition: member `<seq>:<offset>`, score the input offset. */
  sourceOutputs(topic: string, partition: number, source: string): string {
    return `${this.stream(topic, partition)}:src:${source.replace(/ /g, '|')}`
  }

  /** HASH: a compacted topic's key index of the partition (scripts/compact-6.lua): `k<key>` → `<offset> <bytes> <tombstone 0|1>`. */
  compactIndex(topic: string, partition: number): string {
    return `${this.stream(topic, partition)}:cidx`
  }

  /** SORTED SET: a compacted topic's tombstones in the partition still kept: offset → ms the compaction first saw it. */
  compactTombstones(topic: string, partition: number): string {
    return `${this.stream(topic, partition)}:ctomb`
  }

  /** HASH: where compaction of the partition stands and its last pass's counts (scripts/compact-6.lua). */
  compactState(topic: string, partition: number): string {
    return `${this.stream(topic, partition)}:cstate`
  }

  /** STRING: a process compacting the partition in the background holds it (SET NX PX) so others skip it. */
  compactLease(topic: string, partition: number): string {
    return `${this.stream(topic, partition)}:clease`
  }

  /** HASH: a group's state for one partition: owner, epoch, expires, committed. */
  partitionGroup(topic: string, partition: number, group: string): string {
    return `${this.stream(topic, partition)}:g:${group}`
  }

  /** Every key of a partition except group state (for create/delete). */
  partitionKeys(topic: string, partition: number): string[] {
    return [
      this.stream(topic, partition),
      this.end(topic, partition),
      this.start(topic, partition),
      this.producers(topic, partition),
      this.reservation(topic, partition),
      this.ids(topic, partition),
      this.idsBefore(topic, partition),
      this.sources(topic, partition),
      this.compactIndex(topic, partition),
      this.compactTombstones(topic, partition),
      this.compactState(topic, partition),
      this.compactLease(topic, partition),
    ]
  }

  /** SET of group names. */
  groups(): string {
    return `${this.prefix}groups`
  }

  /** HASH: member id → member spec (JSON). */
  groupMembers(group: string): string {
    return `${this.prefix}group:{${group}}:members`
  }

  /** ZSET: member id → session expiry (ms since epoch). */
  groupAlive(group: string): string {
    return `${this.prefix}group:{${group}}:alive`
  }

  /** SET: topics the group consumes or has consumed. */
  groupTopics(group: string): string {
    return `${this.prefix}group:{${group}}:topics`
  }

  /** Pub/sub channel announcing changes of a group's membership or leases. */
  groupChannel(group: string): string {
    return `${this.prefix}group:{${group}}:events`
  }
}
