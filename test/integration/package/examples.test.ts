import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { repoRoot } from '../../helpers/spawn.js'
import { tempDir } from '../../helpers/tmp.js'

// The examples import 'twainmq' as users do, which resolves to dist/ (npm test builds first).
function run(example: string, ...args: string[]): { code: number | null; out: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(repoRoot, 'examples', example), ...args], {
    cwd: repoRoot,
    encoding: 'utf8',
    timeout: 60_000,
  })
  return { code: r.status, out: `${r.stdout}\n${r.stderr}` }
}

describe('examples run as smoke tests', () => {
  it('dist/ is built (npm test runs the build first)', () => {
    expect(existsSync(join(repoRoot, 'dist', 'index.js'))).toBe(true)
  })

  it('quickstart produces, tails six messages and reads them back', () => {
    const { code, out } = run('quickstart.ts')
    expect(code, out).toBe(0)
    expect(out).toMatch(/tail received:/)
    expect(out).toMatch(/\| length 6/)
    expect(out).toMatch(/done/)
  }, 60_000)

  it('quickstart runs again on the same directory (ensureTopic), appending six more messages', () => {
    const dir = tempDir('twainmq-quickstart-')
    try {
      const first = run('quickstart.ts', dir.dir)
      expect(first.code, first.out).toBe(0)
      expect(first.out).toMatch(/\| length 6/)
      const second = run('quickstart.ts', dir.dir)
      expect(second.code, second.out).toBe(0)
      expect(second.out).toMatch(/tail received:/)
      expect(second.out).toMatch(/\| length 12/)
    } finally {
      dir.remove()
    }
  }, 120_000)

  it('tail-with-rxjs emits two hot pairs and counts the history', () => {
    const { code, out } = run('tail-with-rxjs.ts')
    expect(code, out).toBe(0)
    expect(out.match(/hot pair:/g)).toHaveLength(2)
    expect(out).toMatch(/history has 20 readings/)
  }, 60_000)

  it('backlog-with-rxjs writes a 50,000-record backlog through pullMap, four writes at a time', () => {
    const { code, out } = run('backlog-with-rxjs.ts')
    expect(code, out).toBe(0)
    expect(out).toMatch(/wrote 50000 clicks over 13 pages; at most 4 writes at once/)
  }, 60_000)

  it('multi-process-producers gets dense unique offsets from 4 processes', () => {
    const { code, out } = run('multi-process-producers.ts')
    expect(code, out).toBe(0)
    expect(out).toMatch(/4 processes wrote 2000 messages; offsets dense and unique: true/)
  }, 60_000)

  it('idempotent-send: a producer killed part-way and restarted stores every order once', () => {
    const { code, out } = run('idempotent-send.ts')
    expect(code, out).toBe(0)
    expect(out).toMatch(/restarted producer: 1000 sent, 600 already stored/)
    expect(out).toMatch(/stored 1000 messages, 1000 distinct ids/)
  }, 60_000)

  it('event-time: a group reset to an hour ago replays from the first reading at or after it, late ones included', () => {
    const { code, out } = run('event-time.ts')
    expect(code, out).toBe(0)
    expect(out).toMatch(/replayed 7 readings from an hour ago on \(3 of them measured earlier, sent late\)/)
    expect(out).toMatch(/history from an hour ago: offsets 6, 7, 8, 9, 10, 11, 12/)
  }, 60_000)

  it('exactly-once-etl: a processor stopped part-way and the next one store each enriched click once', () => {
    const { code, out } = run('exactly-once-etl.ts')
    expect(code, out).toBe(0)
    expect(out).toMatch(/first run: handled 200 clicks, committed 100/)
    expect(out).toMatch(/second run: [1-9]\d* outputs were already stored/)
    expect(out).toMatch(/enriched topic: 257 records for 257 human clicks, 257 distinct sources/)
    expect(out).toMatch(/sink table: 257 rows; lag 0/)
  }, 60_000)

  it('state-counts: a processor restored from its changelog counts every view once, though the commit lagged', () => {
    const { code, out } = run('state-counts.ts')
    expect(code, out).toBe(0)
    expect(out).toMatch(/first run: ada at 60 views; the group committed 0/)
    expect(out).toMatch(/second run: went on from the restored counts \(its first view counted past 1\)/)
    for (const u of ['ada', 'bob', 'cy', 'dee']) expect(out).toMatch(new RegExp(`changelog: .*\\b${u} 100\\b`))
    expect(out).toMatch(/view-counts: 400 records for 400 views/)
    for (const u of ['ada', 'bob', 'cy', 'dee'])
      expect(out).toMatch(new RegExp(`replay after a reset to the start: .*\\b${u} 100\\b`))
  }, 60_000)

  it('windowed-counts: counts per user per 10 s of event time, each window once, the last closed when idle, the late click aside', () => {
    const { code, out } = run('windowed-counts.ts')
    expect(code, out).toBe(0)
    expect(out).toMatch(/^ada 12:00:00–12:00:10: 5$/m)
    expect(out).toMatch(/^ada 12:00:10–12:00:20: 4$/m)
    expect(out).toMatch(/^bob 12:00:20–12:00:30: 5$/m)
    // Closed by the idle partition's watermark (idleMs), not by a click.
    expect(out).toMatch(/^ada 12:00:30–12:00:40: 4$/m)
    expect(out).toMatch(/^bob 12:00:30–12:00:40: 5$/m)
    expect(out).toMatch(/late clicks: 1/)
    expect(out).toMatch(/clicks-per-10s: 9 results; late-clicks: 1/)
  }, 60_000)

  it('enrich-with-table: each known order once with its tier as the table held it, the unknown one dropped', () => {
    const { code, out } = run('enrich-with-table.ts')
    expect(code, out).toBe(0)
    expect(out).toMatch(/^o1: ada is gold$/m)
    expect(out).toMatch(/^o2: bob is silver$/m)
    expect(out).toMatch(/^o4: bob is gold$/m)
    expect(out).toMatch(/^o5: ada is gold$/m)
    expect(out).not.toMatch(/eve/)
    expect(out).toMatch(/orders-enriched: 4 orders/)
  }, 60_000)

  it('join-payments: each order paired once with its payment within 10 minutes, across a stopped run and its restore', () => {
    const { code, out } = run('join-payments.ts')
    expect(code, out).toBe(0)
    expect(out).toMatch(/^first run: 57 pairs stored$/m)
    expect(out).toMatch(/^second run: 53 more pairs stored$/m)
    expect(out).toMatch(/^paid-orders: 110 records, 110 orders, expected 110$/m)
  }, 60_000)

  it('live-table keeps the latest customer per key, sees a change and a removal, and joins orders with it', () => {
    const { code, out } = run('live-table.ts')
    expect(code, out).toBe(0)
    expect(out).toMatch(/table ready: 3 customers, ada is \{"name":"ada#49","tier":"gold"\}/)
    expect(out).toMatch(/bob: \{"name":"bob#49","tier":"gold"\} → \{"name":"Bob","tier":"gold"\}/)
    expect(out).toMatch(/cy: \{"name":"cy#49","tier":"gold"\} → null/)
    expect(out).toMatch(/order cake by bob: Bob \(gold\)/)
    expect(out).toMatch(/order jam by cy: unknown customer/)
    expect(out).toMatch(/done/)
  }, 60_000)

  it('worker-pool spreads 600 jobs over 3 worker processes and ends with zero lag', () => {
    const { code, out } = run('worker-pool.ts')
    expect(code, out).toBe(0)
    expect(out).toMatch(/all 600 jobs committed; lag 0; members left: 0/)
    const processed = [...out.matchAll(/processed (\d+) jobs/g)].reduce((n, m) => n + Number(m[1]), 0)
    expect(processed).toBeGreaterThanOrEqual(600)
  }, 60_000)

  it('graceful-shutdown drains, commits what it processed and leaves the group on SIGTERM', () => {
    const { code, out } = run('graceful-shutdown.ts')
    expect(code, out).toBe(0)
    const m = /sent (\d+) emails; committed (\d+); members left in the group: 0/.exec(out)
    expect(m, out).not.toBeNull()
    expect(Number(m![2])).toBe(Number(m![1]))
  }, 60_000)

  it('http-subscriptions: a pull-wake worker claims and acks what Node and HTTP appended; a signed webhook is verified', () => {
    const { code, out } = run('http-subscriptions.ts')
    expect(code, out).toBe(0)
    expect(out).toMatch(/PUT subscription billing -> 201/)
    expect(out).toMatch(/wake event for billing/)
    expect(out).toMatch(/worker read orders\/eu: \[\{"id":1,"cents":120\}\]/)
    expect(out).toMatch(/worker read orders\/us: \[\{"id":2,"cents":250\}\]/)
    expect(out).toMatch(/ack -> \{"ok":true,"next_wake":false\}/)
    expect(out).toMatch(/webhook received: signature valid, pending: orders\/eu/)
    expect(out).toMatch(/done/)
  }, 60_000)

  it('http-state: StreamDB reads a compacted state stream (10 events of 1,001) and follows live changes', () => {
    const { code, out } = run('http-state.ts')
    expect(code, out).toBe(0)
    expect(out).toMatch(/PUT board -> 201 stream-compaction: state/)
    expect(out).toMatch(/a new reader downloads 10 events \(1001 were appended\)/)
    expect(out).toMatch(/StreamDB: 9 cards; ann's: card 0 v99, card 2 v99, card 4 v99, card 6 v99, card 8 v99/)
    expect(out).toMatch(/live: ann's: card 0 v100, card 10 v0, card 2 v99, card 4 v99, card 6 v99, card 8 v99/)
    expect(out).toMatch(/done/)
  }, 60_000)

  it('http-gateway serves a stream over HTTP: SSE sees Node and HTTP appends, a consumer group reads them', () => {
    const { code, out } = run('http-gateway.ts')
    expect(code, out).toBe(0)
    expect(out).toMatch(/PUT \/prices -> 201/)
    expect(out).toMatch(
      /SSE received: \[\{"sku":"apple","cents":120\},\{"sku":"bread","cents":250\},\{"sku":"milk","cents":99\}\]/,
    )
    expect(out).toMatch(/GET \/prices -> 200 \[\{"sku":"apple"/)
    expect(out).toMatch(
      /consumer group read: \[\{"sku":"apple","cents":120\},\{"sku":"bread","cents":250\},\{"sku":"milk","cents":99\}\]/,
    )
    expect(out).toMatch(/done/)
  }, 60_000)

  it('prometheus-metrics shows a lagging group at /metrics in messages and seconds, then 0 once it catches up', () => {
    const { code, out } = run('prometheus-metrics.ts')
    expect(code, out).toBe(0)
    expect(out).toMatch(/^twainmq_consumer_lag_messages\{group="billing",topic="orders",partition="0"\} 2$/m)
    expect(out).toMatch(/^twainmq_consumer_lag_messages\{group="billing",topic="orders",partition="1"\} 2$/m)
    const seconds = [...out.matchAll(/^twainmq_consumer_lag_seconds\{[^}]*\} (\S+)$/gm)].map((m) => Number(m[1]))
    expect(seconds).toHaveLength(2)
    for (const s of seconds) expect(s).toBeGreaterThanOrEqual(60)
    expect(out).toMatch(/^twainmq_gateway_requests_total\{route="stream",method="GET",status="200"\} 1$/m)
    expect(out).toMatch(/after catching up: 0, 0/)
    expect(out).toMatch(/done/)
  }, 60_000)

  it('rxjs-pipeline retries, dead-letters the poison payment and ends with zero lag', () => {
    const { code, out } = run('rxjs-pipeline.ts')
    expect(code, out).toBe(0)
    expect(out).toMatch(/processed 30: 29 ok, 1 dead-lettered/)
    expect(out).toMatch(/dead letter: payment 13 \(card declined\) from payments\/\d@\d+/)
    expect(out).toMatch(/lag after close: 0/)
  }, 60_000)

  it('browser-rxjs: headless Chromium renders the RxJS pipeline (tail → filter → scan → bufferTime) over the Node producer', () => {
    const { code, out } = run('browser-rxjs/serve.ts', '--check') // bounded: exits once the page shows the 20th price
    expect(code, out).toBe(0)
    expect(out).toMatch(/page counted 20 prices >= 100 cents, total 2400, last tea at 139; error: ""/)
    expect(out).toMatch(/second tab counted 20, total 2400/)
    expect(out).toMatch(/after a reload, from its cache: 20, total 2400/)
    expect(out).toMatch(/stock \(StreamDB\): apple 76, milk 28, tea 4; error: ""/)
  }, 60_000)
})
