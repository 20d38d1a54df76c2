import type { Operator } from './settleable.js'

/**
 * Applies operators left to right: `pipe(source, op1, op2)` is `op2(op1(source))`. Any function
 * from an `AsyncIterable` to an `AsyncIterable` works, so twainmq's operators mix with IxJS's
 * (`ix/asynciterable/operators`). IxJS's own `from(source).pipe(op1, op2)` works as well.
 *
 * @example
 * ```ts
 * import { ack, batch, pipe } from 'twainmq/operators'
 * import { filter } from 'ix/asynciterable/operators'
 * const batches = pipe(consumer, filter((m) => m.type === 'Order'), batch({ size: 100, maxWaitMs: 50 }))
 * ```
 */
export function pipe<A>(source: AsyncIterable<A>): AsyncIterable<A>
export function pipe<A, B>(source: AsyncIterable<A>, op1: Operator<A, B>): AsyncIterable<B>
export function pipe<A, B, C>(source: AsyncIterable<A>, op1: Operator<A, B>, op2: Operator<B, C>): AsyncIterable<C>
export function pipe<A, B, C, D>(
  source: AsyncIterable<A>,
  op1: Operator<A, B>,
  op2: Operator<B, C>,
  op3: Operator<C, D>,
): AsyncIterable<D>
export function pipe<A, B, C, D, E>(
  source: AsyncIterable<A>,
  op1: Operator<A, B>,
  op2: Operator<B, C>,
  op3: Operator<C, D>,
  op4: Operator<D, E>,
): AsyncIterable<E>
export function pipe<A, B, C, D, E, F>(
  source: AsyncIterable<A>,
  op1: Operator<A, B>,
  op2: Operator<B, C>,
  op3: Operator<C, D>,
  op4: Operator<D, E>,
  op5: Operator<E, F>,
): AsyncIterable<F>
export function pipe<A, B, C, D, E, F, G>(
  source: AsyncIterable<A>,
  op1: Operator<A, B>,
  op2: Operator<B, C>,
  op3: Operator<C, D>,
  op4: Operator<D, E>,
  op5: Operator<E, F>,
  op6: Operator<F, G>,
): AsyncIterable<G>
export function pipe<A, B, C, D, E, F, G, H>(
  source: AsyncIterable<A>,
  op1: Operator<A, B>,
  op2: Operator<B, C>,
  op3: Operator<C, D>,
  op4: Operator<D, E>,
  op5: Operator<E, F>,
  op6: Operator<F, G>,
  op7: Operator<G, H>,
): AsyncIterable<H>
export function pipe<A, B, C, D, E, F, G, H, I>(
  source: AsyncIterable<A>,
  op1: Operator<A, B>,
  op2: Operator<B, C>,
  op3: Operator<C, D>,
  op4: Operator<D, E>,
  op5: Operator<E, F>,
  op6: Operator<F, G>,
  op7: Operator<G, H>,
  op8: Operator<H, I>,
): AsyncIterable<I>
// Longer chains lose the types between steps, as in IxJS and RxJS.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function pipe(source: AsyncIterable<unknown>, ...operators: Array<Operator<any, any>>): AsyncIterable<unknown>
export function pipe(
  source: AsyncIterable<unknown>,
  ...operators: Array<Operator<unknown, unknown>>
): AsyncIterable<unknown> {
  let acc = source
  for (const op of operators) acc = op(acc)
  return acc
}
