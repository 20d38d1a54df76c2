// The dashboard's one import of the browser client (twainmq/browser): the live tail and the
// history pages read through it, so the dashboard is its first user.
// TEMPORARY until twainmq/browser lands on main (issue 14 item 1): reads fail with this error.
export interface BrowserMessage<V = unknown> {
  readonly stream: string
  readonly offset: string
  readonly value: V
  readonly resume: string
}
interface Reads {
  tail(stream: string, options: { from?: string; signal?: AbortSignal }): AsyncIterable<BrowserMessage>
  history(stream: string, options: { from?: string; limit?: number; signal?: AbortSignal }): AsyncIterable<BrowserMessage>
}
export function connect(_baseUrl: string, _options: { token?: string | undefined }): Reads {
  const fail = (): AsyncIterable<BrowserMessage> => ({ [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(new Error('the browser client (twainmq/browser) has not landed yet')) }) })
  return { tail: fail, history: fail }
}
