// The dashboard tests' fixture: a gateway with the dashboard on (over a directory or a private
// redis-server), a topic a Node producer writes, a consumer group that consumes part of it, and a
// headless Chromium (Debian's, by executablePath) to open the page in.
import { mkdirSync } from 'node:fs'
import { chromium, type Browser } from 'playwright-core'
import { build } from 'vite'
import type { Consumer, Producer } from '../../src/index.js'
import { RedisServer } from '../helpers/redis-server.js'
import { tempDir } from '../helpers/tmp.js'
import { serve, type Served } from '../gateway/serve.js'

export const READER = 'reader-token-0123456789abcdef'
export const WRITER = 'writer-token-0123456789abcdef'
export const ARTIFACTS = new URL('../../test-artifacts/', import.meta.url)
/** The stores' gateways' `longPollMs` and `sseMaxMs`: longer than any test. */
export const LIVE_MS = 3_600_000

/**
 * Bundle the dashboard from the current source as `npm run build` does, but into a directory of its
 * own (the gateway's `ui: <dir>`), so a test never races another one reading dist/ui/.
 */
export async function buildUi(): Promise<{ dir: string; remove: () => void }> {
  const out = tempDir('twainmq-dashboard-ui-')
  await build({
    configFile: new URL('../../ui/vite.config.ts', import.meta.url).pathname,
    logLevel: 'error',
    build: { outDir: out.dir, emptyOutDir: true },
  })
  mkdirSync(ARTIFACTS, { recursive: true })
  return out
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'], headless: true })
}

export interface DashboardStore {
  gw: Served
  producer: Producer<{ n: number; tag?: string }>
  consumer: Consumer<{ n: number }>
  sent: number
  /** Send `count` more messages, alternating partitions. */
  send(count: number): Promise<void>
  /** Consume and ack `count` messages with the group's consumer, and commit. */
  consume(count: number): Promise<void>
  stop(): Promise<void>
}

export async function startStore(kind: 'file' | 'redis', ui: string): Promise<DashboardStore> {
  const redis = kind === 'redis' ? await RedisServer.start() : undefined
  const dir = kind === 'file' ? tempDir('twainmq-dashboard-') : undefined
  const gw = await serve(redis ? redis.url : (dir as { dir: string }).dir, {
    ui,
    statsIntervalMs: 100,
    // No timer answers a live read that missed its wake-up within a test: by default an SSE read
    // looks at its stream again after 20 s and ends after 60 s, which would show a missed record
    // late (a bound broken under load) instead of never (a failure whatever the bound).
    longPollMs: LIVE_MS,
    sseMaxMs: LIVE_MS,
    auth: {
      tokens: [
        { name: 'reader', token: READER, read: ['*'] },
        { name: 'writer', token: WRITER, write: ['*'] },
      ],
    },
  })
  await gw.twain.createTopic('orders', { partitions: 2 })
  const producer = gw.twain.producer<{ n: number; tag?: string }>('orders', { lingerMs: 0 })
  const consumer = gw.twain.consumer<{ n: number }>('orders', {
    group: 'billing',
    name: 'billing-1',
    from: 'start',
    sessionTimeoutMs: 5000,
    heartbeatIntervalMs: 200,
    commitIntervalMs: 100,
  })
  const s: DashboardStore = {
    gw,
    producer,
    consumer,
    sent: 0,
    async send(count) {
      for (let i = 0; i < count; i++, s.sent++) await producer.send(s.sent, { n: s.sent }, { partition: s.sent % 2 })
    },
    async consume(count) {
      if (count === 0) return
      let n = 0
      for await (const m of consumer) {
        m.ack()
        if (++n === count) break
      }
      await consumer.commit()
    },
    async stop() {
      await consumer.close().catch(() => undefined)
      await producer.close().catch(() => undefined)
      await gw.stop()
      await redis?.stop()
      dir?.remove()
    },
  }
  return s
}
