import type { Key, Message } from '../core/types.js'
import type { BatchSource } from './batch-iterator.js'

/** One change of a {@link Table}: the record that set (or, with a `null` value, removed) a key. */
export interface TableChange<V = unknown, K extends Key = Key> {
  key: K
  /** The key's new value; `null` when the record is a tombstone (the key is removed). */
  value: V | null
  /** The key's value before this record, `undefined` when the table did not hold the key. */
  previous: V | undefined
  /** The record itself. */
  message: Message<V | null, K>
}

/**
 * The changes waiting for one iteration of `Table.changes()`. The table pushes every change it
 * applies; when an iteration has `limit` waiting, `full()` gives a promise the table awaits before
 * it reads on, so a slow reader of changes slows the table instead of growing memory.
 */
export class ChangeQueue<V, K extends Key> implements BatchSource<TableChange<V, K>> {
  private items: TableChange<V, K>[] = []
  private waiter: (() => void) | undefined
  private drained: (() => void) | undefined
  private done = false
  private failure: { error: unknown } | undefined

  constructor(
    private readonly limit: number,
    private readonly onClose: (q: ChangeQueue<V, K>) => void,
  ) {}

  push(change: TableChange<V, K>): void {
    if (this.done) return
    this.items.push(change)
    const w = this.waiter
    this.waiter = undefined
    w?.()
  }

  /** A promise to await before pushing more, when `limit` changes wait; `undefined` otherwise. */
  full(): Promise<void> | undefined {
    if (this.done || this.items.length < this.limit) return undefined
    return new Promise<void>((resolve) => {
      this.drained = resolve
    })
  }

  /** No change will come any more (the table closed): the iteration ends once it has taken the rest. */
  end(): void {
    this.done = true
    this.wakeAll()
  }

  /** The table failed: the iteration takes the rest, then throws `error`. */
  fail(error: unknown): void {
    this.failure = { error }
    this.end()
  }

  async next(signal: AbortSignal): Promise<TableChange<V, K>[] | undefined> {
    while (this.items.length === 0) {
      if (this.failure && !signal.aborted) throw this.failure.error
      if (this.done || signal.aborted) return undefined
      await new Promise<void>((resolve) => {
        const off = () => {
          signal.removeEventListener('abort', off)
          resolve()
        }
        this.waiter = off
        signal.addEventListener('abort', off, { once: true })
      })
    }
    const out = this.items
    this.items = []
    const d = this.drained
    this.drained = undefined
    d?.()
    return out
  }

  close(): void {
    this.done = true
    this.items = []
    this.wakeAll()
    this.onClose(this)
  }

  private wakeAll(): void {
    const w = this.waiter
    this.waiter = undefined
    w?.()
    const d = this.drained
    this.drained = undefined
    d?.()
  }
}
