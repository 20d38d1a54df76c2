// `twainmq serve` serves the dashboard at / (what `npm run build` bundled into dist/ui/; `npm test`
// builds first), and `--no-ui` turns it off while the overview endpoints stay.
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { startCli, waitFor, type CliChild } from '../../helpers/cli.js'
import { killChildren } from '../../helpers/spawn.js'
import { tempDir } from '../../helpers/tmp.js'

const LINE =
  /^twainmq gateway listening on http:\/\/127\.0\.0\.1:([0-9]+)\/v1\/stream\/( \(dashboard: http:\/\/127\.0\.0\.1:\1\/\))?\n$/
const children: CliChild[] = []
const tmp = tempDir('twainmq-serve-ui-')

async function serve(extra: string[]): Promise<string> {
  const child = startCli(['--url', tmp.dir, 'serve', '--port', '0', ...extra])
  children.push(child)
  await waitFor('serve to print its URL', () => LINE.test(child.out.stdout) || child.exitCode !== null, 30_000)
  const m = LINE.exec(child.out.stdout)
  if (!m) throw new Error(`serve did not start: ${child.out.stderr}`)
  // Its one line names the dashboard where there is one.
  expect(m[2] !== undefined).toBe(!extra.includes('--no-ui'))
  return `http://127.0.0.1:${m[1]}`
}

afterEach(async () => {
  await killChildren(children)
})
afterAll(() => tmp.remove())

describe('twainmq serve and the dashboard', () => {
  it('serves the dashboard at / by default', async () => {
    const origin = await serve([])
    const res = await fetch(`${origin}/`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(await res.text()).toContain('<div id="lag-chart"')
  })

  it('does not with --no-ui; the overview endpoints stay', async () => {
    const origin = await serve(['--no-ui'])
    const res = await fetch(`${origin}/`)
    expect(res.status).toBe(404)
    await res.text()
    const topics = await fetch(`${origin}/v1/topics`)
    expect(topics.status).toBe(200)
    expect(await topics.json()).toMatchObject({ topics: [] })
  })
})
