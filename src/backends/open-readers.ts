import type { PartitionReader } from './backend.js'

/**
 * The readers a store has open, so that closing the store closes them. A reader leaves the set when
 * it is closed: the store makes it with the hook its `close()` calls (a constructor argument of the
 * reader, never a replaced `close`).
 */
export class OpenReaders {
  private readonly open = new Set<PartitionReader>()

  /** Make a reader with `make`, which passes `onClose` to it, and keep it until it calls that. */
  add<R extends PartitionReader>(make: (onClose: () => void) => R): R {
    const reader = make(() => this.open.delete(reader))
    this.open.add(reader)
    return reader
  }

  /** Close every reader still open (the store is closing). */
  async closeAll(): Promise<void> {
    await Promise.all([...this.open].map((r) => r.close()))
  }
}
