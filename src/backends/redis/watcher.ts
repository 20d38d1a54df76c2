import { Cluster } from 'ioredis'
import type { Client } from './connection.js'
import { keySlot } from './key-slot.js'
import type { RollbackNotice } from './incarnations.js'
import type { RedisKeys } from './keys.js'
import type { RecentEntries } from './reader.js'
import { SlotGroup, type Subscriber, type Watched } from './slot-group.js'
import { TailLanes } from './tail-lanes.js'

/**
 * The partition watchers of one backend instance: one per watched partition, shared by its
 * subscribers, grouped by Cluster slot (on one Redis: one group) so one blocking read serves a
 * group. Connections: one per group waiting at once, per node (tail-lanes.ts). After each reply the
 * group looks at its partitions' ends and incarnations to find rollbacks (slot-group.ts, decision 112).
 */
export class RedisWatchers {
  private readonly watched = new Map<string, Watched>()
  private readonly groups = new Map<number, SlotGroup>()
  private readonly lanes: TailLanes
  private closed = false
  /** On a Cluster: every second, reads on a node that lost their slot are moved and unused lanes closed (unref'd). */
  private readonly timer: NodeJS.Timeout | undefined

  constructor(
    private readonly base: Client,
    private readonly keys: RedisKeys,
  ) {
    this.lanes = new TailLanes(base)
    if (base instanceof Cluster) {
      this.timer = setInterval(() => {
        for (const g of this.groups.values()) g.checkNode()
        this.lanes.prune()
      }, 1000)
      this.timer.unref()
    }
  }

  private groupOf(streamKey: string): number {
    return this.base instanceof Cluster ? keySlot(streamKey) : 0
  }

  private persistent(): boolean {
    for (const w of this.watched.values()) for (const s of w.subs) if (s.persistent) return true
    return false
  }

  watch(topic: string, partition: number, onData: () => void, persistent: boolean): () => void {
    if (this.closed) return () => undefined
    const id = `${topic}\0${partition}`
    let w = this.watched.get(id)
    if (!w) {
      const streamKey = this.keys.stream(topic, partition)
      w = {
        id,
        streamKey,
        endKey: this.keys.end(topic, partition),
        producersKey: this.keys.producers(topic, partition),
        subs: new Set(),
        recent: undefined,
        cursor: undefined,
        rollback: undefined,
        seen: undefined,
      }
      this.watched.set(id, w)
      const slot = this.groupOf(streamKey)
      let g = this.groups.get(slot)
      if (!g) this.groups.set(slot, (g = new SlotGroup(this.base, this.lanes, slot, () => this.persistent())))
      g.add(w)
    }
    const sub: Subscriber = { onData, persistent }
    w.subs.add(sub)
    this.lanes.pin(this.persistent())
    const watched = w
    return () => {
      if (!watched.subs.delete(sub)) return
      this.lanes.pin(this.persistent())
      // Stop after the current task unless someone subscribes again at once (re-subscribing to change `persistent`).
      if (watched.subs.size === 0) queueMicrotask(() => this.unwatch(watched))
    }
  }

  private unwatch(w: Watched): void {
    if (w.subs.size > 0 || this.watched.get(w.id) !== w) return
    this.watched.delete(w.id)
    w.recent = undefined
    const slot = this.groupOf(w.streamKey)
    const g = this.groups.get(slot)
    if (!g) return
    g.members.delete(w.streamKey)
    if (g.members.size === 0) {
      this.groups.delete(slot)
      g.stop()
      if (this.groups.size === 0) this.lanes.close() // nothing watched: no blocking connection stays open
    }
  }

  /** What the partition's watcher received last (for its readers). */
  recent(topic: string, partition: number): RecentEntries | undefined {
    return this.watched.get(`${topic}\0${partition}`)?.recent
  }

  /** The latest rollback the partition's watcher found, if it runs. */
  rollback(topic: string, partition: number): RollbackNotice | undefined {
    return this.watched.get(`${topic}\0${partition}`)?.rollback
  }

  /** Close every blocking connection at once. */
  close(): void {
    this.closed = true
    clearInterval(this.timer)
    for (const g of this.groups.values()) g.stop()
    this.groups.clear()
    this.watched.clear()
    this.lanes.close()
  }
}
