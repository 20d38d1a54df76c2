// A gateway on a fixed loopback port that a test can kill (every socket destroyed at once, as when
// the process dies: the page sees a network error mid-SSE) and start again on the same port over
// the same store, with a new Twain, as a restarted `twainmq serve` would be.
import { createServer, type Server } from 'node:http'
import { open, type Twain } from '../../src/index.js'
import { createGateway, type Gateway, type GatewayOptions } from '../../src/gateway/index.js'
import { backendOf } from '../../src/facade/twain.js'
import { freePort } from '../helpers/redis-server.js'

export class TestGateway {
  private server: Server | undefined
  private gateway: Gateway | undefined
  private twainNow: Twain | undefined
  private watching = 0
  /** The same, per topic. */
  private readonly watchingTopic = new Map<string, number>()
  /** Response body bytes sent, per request path (counted until `resetBytes`). */
  private sent = new Map<string, number>()
  /** How many times it was started. */
  starts = 0

  private constructor(
    private readonly target: string,
    readonly port: number,
    private readonly options: GatewayOptions,
  ) {}

  /** Starts a gateway over `target` (a directory or a Redis URL) on a free port. */
  static async start(target: string, options: GatewayOptions = {}): Promise<TestGateway> {
    const g = new TestGateway(target, await freePort(), { cors: '*', ...options })
    await g.restart()
    return g
  }

  /** Origin, e.g. http://127.0.0.1:12345 */
  get url(): string {
    return `http://127.0.0.1:${this.port}`
  }

  /** The Twain of the running gateway (for producing in Node). */
  get twain(): Twain {
    if (!this.twainNow) throw new Error('the gateway is not running')
    return this.twainNow
  }

  /** Response body bytes sent for requests whose path starts with `prefix` since the last `resetBytes`. */
  bytesFor(prefix: string): number {
    let n = 0
    for (const [path, bytes] of this.sent) if (path.startsWith(prefix)) n += bytes
    return n
  }

  resetBytes(): void {
    this.sent.clear()
  }

  /** Live reads open now (each SSE or long-poll response holds one backend watch), of `topic` or of all. */
  watches(topic?: string): number {
    return topic === undefined ? this.watching : (this.watchingTopic.get(topic) ?? 0)
  }

  /** Starts it (again) on the same port and store. */
  async restart(): Promise<void> {
    if (this.server) throw new Error('the gateway is running')
    const twain = await open(this.target)
    const store = backendOf(twain)
    const watch = store.watch.bind(store)
    store.watch = (topic, partition, onData, persistent) => {
      const unwatch = watch(topic, partition, onData, persistent)
      const count = (d: number): void => {
        this.watching += d
        this.watchingTopic.set(topic, (this.watchingTopic.get(topic) ?? 0) + d)
      }
      count(1)
      let done = false
      return () => {
        if (!done) count(-1)
        done = true
        unwatch()
      }
    }
    const gateway = createGateway(twain, this.options)
    const server = createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0] ?? '/'
      const count = (chunk: unknown): void => {
        const n = typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk instanceof Uint8Array ? chunk.length : 0
        this.sent.set(path, (this.sent.get(path) ?? 0) + n)
      }
      const write = res.write.bind(res) as (...a: unknown[]) => boolean
      const end = res.end.bind(res) as (...a: unknown[]) => typeof res
      res.write = ((...a: unknown[]) => (count(a[0]), write(...a))) as typeof res.write
      res.end = ((...a: unknown[]) => (typeof a[0] !== 'function' && count(a[0]), end(...a))) as typeof res.end
      gateway.node(req, res)
    })
    server.keepAliveTimeout = 60_000
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(this.port, '127.0.0.1', resolve)
    })
    this.server = server
    this.gateway = gateway
    this.twainNow = twain
    this.starts++
  }

  /** Dies: every connection is destroyed at once (no graceful SSE end), then the store is closed. */
  async kill(): Promise<void> {
    const { server, gateway, twainNow } = this
    this.server = undefined
    this.gateway = undefined
    this.twainNow = undefined
    if (!server) return
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
    await gateway?.close()
    await twainNow?.close()
  }
}
