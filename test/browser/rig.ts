// What a Chromium test file of the browser client sets up once: the test page's files and their
// server, a headless Chromium, a gateway over a fresh directory store, and a Twain over the same
// store to produce with (another process, as far as the gateway knows).
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll } from 'vitest'
import type { GatewayOptions } from '../../src/gateway/index.js'
import { open, type Twain } from '../../src/index.js'
import { tempDir } from '../helpers/tmp.js'
import { TestGateway } from './gateway.js'
import { buildPage, launch, servePage } from './page.js'

export interface Rig {
  browser: Browser
  /** The test page's URL. */
  site: string
  gateway: TestGateway
  twain: Twain
}

/**
 * Starts the rig in the file's `beforeAll` and stops it in its `afterAll`; its fields are set once
 * `beforeAll` ran. `more` builds more pages into the site's directory.
 */
export function chromiumRig(name: string, options: GatewayOptions, more?: (dir: string) => Promise<void>): Rig {
  const files = tempDir(`twainmq-browser-${name}-`)
  const store = tempDir(`twainmq-browser-${name}-store-`)
  const rig = {} as Rig
  let server: Awaited<ReturnType<typeof servePage>> | undefined
  beforeAll(async () => {
    await buildPage(files.dir)
    await more?.(files.dir)
    server = await servePage(files.dir)
    rig.site = server.url
    rig.browser = await launch()
    rig.gateway = await TestGateway.start(store.dir, options)
    rig.twain = await open(store.dir)
  }, 60_000)
  afterAll(async () => {
    await rig.browser?.close()
    await server?.close()
    await rig.twain?.close()
    await rig.gateway?.kill()
    files.remove()
    store.remove()
  })
  return rig
}
