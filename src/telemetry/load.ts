import type * as OtelApi from '@opentelemetry/api'

/** The `@opentelemetry/api` module, as a dynamic import gives it. */
export type Otel = typeof OtelApi

/*
 * `@opentelemetry/api` is an optional peer dependency: twainmq never requires it. It is loaded
 * here with a dynamic import, once per process, the first time a store is opened with telemetry
 * on; when the application does not have it the import fails and telemetry stays off (nothing is
 * traced, measured or added to headers). No other file imports the package except for its types
 * (scripts/check-deps.mjs refuses a static import).
 */

const importOtel = async (): Promise<Otel | undefined> => {
  try {
    return await import('@opentelemetry/api')
  } catch {
    return undefined
  }
}

let loader: () => Promise<Otel | undefined> = importOtel
let loading: Promise<Otel | undefined> | undefined

/** The OpenTelemetry API when the application has it, else undefined (loaded once). */
export function loadOtel(): Promise<Otel | undefined> {
  return (loading ??= loader())
}

/**
 * @internal For tests: load the API with `load` from now on (`undefined` restores the dynamic
 * import), forgetting what was loaded.
 */
export function setOtelLoader(load: (() => Promise<Otel | undefined>) | undefined): void {
  loader = load ?? importOtel
  loading = undefined
}
