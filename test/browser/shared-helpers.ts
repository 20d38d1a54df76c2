// Reads a whole stream (or the rest of it from a token) with the browser client, for the shared-tail tests.
import { connect, type BrowserMessage } from '../../src/browser/index.js'

export async function history<V = number>(url: string, stream: string, from?: string): Promise<BrowserMessage<V>[]> {
  const out: BrowserMessage<V>[] = []
  for await (const m of connect(url).history<V>(stream, from === undefined ? {} : { from })) out.push(m)
  return out
}
