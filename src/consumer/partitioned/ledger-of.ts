import type { PartitionedLedger } from './ledger.js'

/** Reads a consumer's ledger: given once by `Consumer`'s static block, which alone sees its `#ledger`. */
let read: ((consumer: object) => PartitionedLedger<unknown>) | undefined

/** Called once, by `Consumer` (./consumer.ts). */
export function exposeLedger(reader: (consumer: object) => PartitionedLedger<unknown>): void {
  read = reader
}

/**
 * A partitioned consumer's ledger, for tests that check its counts; the library never calls it
 * (the ledger is a private part of `Consumer`, off its public API). Throws for anything else.
 */
export function ledgerOf(consumer: object): PartitionedLedger<unknown> {
  if (!read) throw new TypeError('no Consumer class has been loaded')
  return read(consumer)
}
