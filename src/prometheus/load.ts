import type * as PromClient from 'prom-client'
import { TwainError } from '../core/errors.js'

/** The `prom-client` module, as a dynamic import gives it. */
export type Prom = typeof PromClient

/*
 * `prom-client` is an optional peer dependency: only `twainmq/prometheus` (and `twainmq serve
 * --metrics`) needs it. It is loaded here with a dynamic import; no other file imports it except
 * for its types (scripts/check-deps.mjs refuses a static import). It is not a dependency because
 * it depends on `@opentelemetry/api`, whose presence turns twainmq's tracing on (decision 201).
 */

const importProm = async (): Promise<Prom | undefined> => {
  try {
    return await import('prom-client')
  } catch {
    return undefined
  }
}

let loader: () => Promise<Prom | undefined> = importProm

/** `prom-client`, or a `TwainError` (`ERR_MISSING_PACKAGE`) saying how to install it. */
export async function loadProm(): Promise<Prom> {
  const prom = await loader()
  if (prom === undefined)
    throw new TwainError(
      'Prometheus metrics need the prom-client package, an optional peer dependency of twainmq: npm install prom-client',
      { code: 'ERR_MISSING_PACKAGE' },
    )
  return prom
}

/** @internal For tests: load `prom-client` with `load` from now on (`undefined` restores the dynamic import). */
export function setPromLoader(load: (() => Promise<Prom | undefined>) | undefined): void {
  loader = load ?? importProm
}
