// A gateway over a twainmq store on a free loopback port, for the gateway tests.
import { createServer, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { open, type Twain } from '../../src/index.js'
import { createGateway, type Gateway, type GatewayOptions } from '../../src/gateway/index.js'
import { backendOf } from '../../src/facade/twain.js'

export interface Served {
  twain: Twain
  gateway: Gateway
  /** Origin, e.g. http://127.0.0.1:12345 */
  url: string
  /** How many backend watches are open now (the gateway's live reads hold one each). */
  watches(): number
  /** The responses the server has made, newest last (to observe backpressure). */
  responses: ServerResponse[]
  stop(): Promise<void>
}

export async function serve(target: string, options: GatewayOptions = {}): Promise<Served> {
  const twain = await open(target)
  const store = backendOf(twain)
  const watch = store.watch.bind(store)
  let watches = 0
  store.watch = (topic, partition, onData, persistent) => {
    const unwatch = watch(topic, partition, onData, persistent)
    watches++
    let done = false
    return () => {
      if (!done) watches--
      done = true
      unwatch()
    }
  }
  const gateway = createGateway(twain, options)
  const responses: ServerResponse[] = []
  const server: Server = createServer((req, res) => {
    responses.push(res)
    gateway.node(req, res)
  })
  // Longer than the client's keep-alive (undici: 4 s), so the client always closes an idle
  // connection first: with Node's 5 s default a loaded machine can reuse one the server just closed.
  server.keepAliveTimeout = 60_000
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    twain,
    gateway,
    url: `http://127.0.0.1:${port}`,
    watches: () => watches,
    responses,
    async stop() {
      await gateway.close()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await twain.close()
    },
  }
}
