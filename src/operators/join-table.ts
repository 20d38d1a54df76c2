import { AsyncIterableX } from 'ix/asynciterable/asynciterablex'
import { InvalidArgumentError } from '../core/errors.js'
import { asyncIterableOption, optionsObject, signalOption } from './options.js'
import { PerMessageIterator } from './per-message.js'
import { Joined } from './joined.js'
import type { Settleable } from './settleable.js'
import type { JoinOperator } from './typed-operators.js'
import { STOPPED } from './upstream.js'

/** What `joinTable` needs of a table (a `Table` of `twain.table()`): `ready()` and `get(key)`. */
export interface JoinableTable<V, K> {
  ready(): Promise<void>
  get(key: K): V | undefined
}

/** Options of {@link joinTable} (and `joinTableRx`). */
export interface JoinTableOptions<M, K> {
  /** The table key of a message. @default the message's `key` */
  key?: (message: M) => K
  /** Ack and drop messages whose key the table does not hold (an inner join). @default false: they come with `value: undefined` (a left join) */
  inner?: boolean
  /** Aborting ends the iteration with `AbortError`, also while it waits for the table. @default undefined (not abortable) */
  signal?: AbortSignal
}

/** Check `joinTable`'s arguments; throws `InvalidArgumentError` naming the bad value. */
export function resolveJoinTable<M, K>(
  where: string,
  table: unknown,
  options: JoinTableOptions<M, K> | undefined,
): { key: ((m: M) => K) | undefined; inner: boolean; signal: AbortSignal | undefined } {
  const t = table as { ready?: unknown; get?: unknown } | null
  if (typeof t?.ready !== 'function' || typeof t.get !== 'function')
    throw new InvalidArgumentError(
      `${where}: the table must have ready() and get(key) (a twain.table()), got ${String(table)}`,
    )
  const o = optionsObject(where, options)
  if (o.key !== undefined && typeof o.key !== 'function')
    throw new InvalidArgumentError(`${where}: key must be a function of the message, got ${String(o.key)}`)
  if (o.inner !== undefined && typeof o.inner !== 'boolean')
    throw new InvalidArgumentError(`${where}: inner must be a boolean, got ${String(o.inner)}`)
  return { key: o.key, inner: o.inner ?? false, signal: signalOption(where, o.signal) }
}

/**
 * A stream–table join: each message comes on as a {@link Joined} with the table's value for its
 * key at the moment it is handed on (the table as it is then, following its topic live). The
 * first message waits for `table.ready()`, so no message is joined with a table that has not read
 * its topic yet. The table holds every partition of its topic, so the two topics need not be
 * partitioned alike.
 *
 * - `key` picks another table key than the message's (an order's `customerId`).
 * - `inner: true` acks and drops the messages the table has no value for; by default they come
 *   on with `value: undefined`.
 * - A `key` function that throws, or a table that fails to get ready, nacks the message and ends
 *   the iteration with the error. `return()` and the signal end the iteration at once, handing the
 *   message being joined back to its source.
 *
 * @example
 * ```ts
 * const customers = twain.table<Customer, string>('customers')
 * for await (const j of pipe(orders, joinTable(customers, { key: (m) => m.value.customerId }))) {
 *   await j.message.send('orders-enriched', j.message.key, { ...j.message.value, tier: j.value?.tier ?? 'new' })
 *   j.ack()
 * }
 * ```
 */
export function joinTable<V, K, T extends Settleable & H, H = T>(
  table: JoinableTable<V, K>,
  options?: JoinTableOptions<H, K>,
): JoinOperator<T, V> {
  const o = resolveJoinTable('joinTable()', table, options)
  return (<M extends T>(source: AsyncIterable<M>) => {
    asyncIterableOption('joinTable()', source)
    return new JoinTableIterable<M, V, K>(source, table, o as Resolved<M, K>)
  }) as JoinOperator<T, V>
}

type Resolved<M, K> = ReturnType<typeof resolveJoinTable<M, K>>

class JoinTableIterable<M extends Settleable, V, K> extends AsyncIterableX<Joined<M, V>> {
  constructor(
    private readonly source: AsyncIterable<M>,
    private readonly table: JoinableTable<V, K>,
    private readonly o: Resolved<M, K>,
  ) {
    super()
  }

  [Symbol.asyncIterator](signal?: AbortSignal): AsyncIterableIterator<Joined<M, V>> {
    return new JoinTableIterator(this.source, this.table, this.o, signal)
  }
}

class JoinTableIterator<M extends Settleable, V, K> extends PerMessageIterator<M, Joined<M, V>> {
  #ready = false

  constructor(
    source: AsyncIterable<M>,
    private readonly table: JoinableTable<V, K>,
    private readonly o: Resolved<M, K>,
    outer: AbortSignal | undefined,
  ) {
    super(source, o.signal, outer)
  }

  protected async handle(m: M): Promise<IteratorResult<Joined<M, V>> | undefined> {
    let value: V | undefined
    try {
      if (!this.#ready) {
        if ((await this.up.until(this.table.ready())) === STOPPED || this.up.stopped) return this.stopped(m)
        this.#ready = true
      }
      const key = this.o.key === undefined ? (m.key as K) : this.o.key(m)
      value = this.table.get(key)
    } catch (error) {
      m.nack()
      this.fail()
      throw error
    }
    if (this.up.stopped) return this.stopped(m)
    if (value === undefined && this.o.inner) {
      m.ack()
      return undefined
    }
    return { done: false, value: new Joined(m, value) }
  }
}
