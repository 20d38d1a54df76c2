// `@durable-streams/state`'s StreamDB (with TanStack DB) for the State Protocol test page, bundled
// as it is: the page uses it unchanged against the gateway.
export { createLiveQueryCollection, createStateSchema, createStreamDB, eq } from '@durable-streams/state/db'
