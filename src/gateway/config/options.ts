import { InvalidArgumentError } from '../../core/errors.js'
import { checkInt, checkKnownKeys } from '../../core/names.js'
import type { AuthorizeHook, AuthorizeRequest } from '../auth/authorize.js'
import { TokenAuth, type AuthFile } from '../auth/auth-tokens.js'
import { isMetricsSink, type GatewayMetricsSink } from './metrics-sink.js'
import { DEFAULT_TOMBSTONE_RETENTION_MS } from '../../facade/topic-options.js'

/** Options of `createGateway`. */
export interface GatewayOptions {
  /** How long a long-poll read waits for new data before answering 204, in ms. @default 20000 */
  longPollMs?: number
  /** URL path under which streams live: `<basePath>/<name>`. @default '/v1/stream' */
  basePath?: string
  /** Largest request body accepted; a larger one is refused with 413. @default 8 MiB (8388608) */
  maxBodyBytes?: number
  /** Most value bytes in one catch-up response or SSE data event (reads are paged by it; a larger single message is sent alone). @default 1 MiB (1048576) */
  maxReadBytes?: number
  /** An SSE response is ended after this many ms (the client reconnects from its last offset). @default 60000 */
  sseMaxMs?: number
  /**
   * Origins allowed by CORS: `'*'` or a list of exact origins (`'https://app.example'`). CORS
   * headers are sent only when this is set. @default undefined (CORS off)
   */
  cors?: string | readonly string[]
  /**
   * Bearer tokens and what each may read and write (docs/gateway.md, "Auth"): a `TokenAuth`
   * (`TokenAuth.load(file)`) or the content of an auth file. Requests without a valid token get
   * 401, outside the token's grants 403. @default undefined (no token check)
   */
  auth?: TokenAuth | AuthFile
  /** A custom check after the token check: resolve false to answer 403. @default undefined */
  authorize?: AuthorizeHook
  /** Live reads (long-poll, SSE) one client may have open at once; one more gets 429. @default 64 */
  maxLivePerClient?: number
  /**
   * Who a request comes from, for `maxLivePerClient` (e.g. a user id from your own auth, or a
   * trusted proxy's `X-Forwarded-For`); undefined: not counted. @default the token's name with
   * `auth`, else the peer address (Node handler; a Fetch handler has none: not counted)
   */
  clientKey?: (request: AuthorizeRequest) => string | undefined
  /**
   * Serve the dashboard at `/` and `/assets/…` (docs/dashboard.md): `true` the one `npm run build`
   * bundled into dist/ui/, or a directory holding another build of it (`index.html`, `assets/`).
   * `twainmq serve` turns it on unless `--no-ui`. @default false
   */
  ui?: boolean | string
  /**
   * How often the store is sampled for the live overview (`GET /v1/live`: rates, lag), in ms; the
   * sampling runs only while a viewer is connected. @default 1000
   */
  statsIntervalMs?: number
  /**
   * Count requests (by route, method and status, with durations) and open live reads into these
   * metrics, and serve their exposition at `GET /metrics` (with `auth`, to tokens that may read
   * every stream, as the overview endpoints): `await prometheusMetrics(twain)` of
   * `twainmq/prometheus`. `twainmq serve --metrics` turns it on. @default undefined (no metrics, no `/metrics`)
   */
  metrics?: GatewayMetricsSink
  /**
   * Serve the protocol's subscriptions under `<basePath>/__ds/` (docs/gateway.md,
   * "Subscriptions"): webhook and pull-wake subscriptions over streams matched by a pattern or
   * named, kept in the store (the internal topic `__ds_subscriptions`), so a gateway started again
   * over it serves them on. Run them on one gateway process per store. `twainmq serve
   * --subscriptions` turns it on. @default false (`__ds/` answers 404)
   */
  subscriptions?: boolean
  /**
   * The gateway's origin as webhook receivers reach it (`https://streams.example`): the start of
   * the callback and key-set URLs a subscription gives them. @default the origin of the request
   * that created the subscription (its `Host` header)
   */
  publicUrl?: string
  /**
   * How often the compacted streams written through this gateway (created with `Stream-Compaction:
   * state`, docs/gateway.md "Compacted state streams") get a compaction pass, in ms: a new reader
   * gets each entity's latest event, not its history, within about this long of the writes.
   * @default 30000
   */
  compactEveryMs?: number
  /**
   * How long a delete of a compacted stream is kept after it was written, in ms: a reader that
   * falls further behind may miss it, and should read the stream again from the start. Set when a
   * stream is created (its topic's `tombstoneRetentionMs`). @default 86400000 (a day)
   */
  tombstoneRetentionMs?: number
}

export interface ResolvedGatewayOptions {
  longPollMs: number
  basePath: string
  maxBodyBytes: number
  maxReadBytes: number
  sseMaxMs: number
  cors: '*' | ReadonlySet<string> | undefined
  auth: TokenAuth | undefined
  authorize: AuthorizeHook | undefined
  maxLivePerClient: number
  clientKey: ((request: AuthorizeRequest) => string | undefined) | undefined
  ui: boolean | string
  statsIntervalMs: number
  metrics: GatewayMetricsSink | undefined
  subscriptions: boolean
  publicUrl: string | undefined
  compactEveryMs: number
  tombstoneRetentionMs: number
}

/** Check the options and fill in the defaults; throws `InvalidArgumentError` naming a bad one. */
export function resolveGatewayOptions(o: GatewayOptions = {}): ResolvedGatewayOptions {
  checkKnownKeys('createGateway()', o, [
    'longPollMs',
    'basePath',
    'maxBodyBytes',
    'maxReadBytes',
    'sseMaxMs',
    'cors',
    'auth',
    'authorize',
    'maxLivePerClient',
    'clientKey',
    'ui',
    'statsIntervalMs',
    'metrics',
    'subscriptions',
    'publicUrl',
    'compactEveryMs',
    'tombstoneRetentionMs',
  ])
  if (o.subscriptions !== undefined && typeof o.subscriptions !== 'boolean')
    throw new InvalidArgumentError(`subscriptions must be a boolean, got ${JSON.stringify(o.subscriptions)}`)
  let publicUrl: string | undefined
  if (o.publicUrl !== undefined) {
    let url: URL | undefined
    try {
      url = new URL(o.publicUrl)
    } catch {
      url = undefined
    }
    if (url === undefined || url.origin === 'null' || url.pathname !== '/' || url.search !== '' || url.hash !== '')
      throw new InvalidArgumentError(
        `publicUrl must be an origin like https://streams.example, got ${JSON.stringify(o.publicUrl)}`,
      )
    publicUrl = url.origin
  }
  if (o.metrics !== undefined && !isMetricsSink(o.metrics))
    throw new InvalidArgumentError(
      `metrics must be what prometheusMetrics() of twainmq/prometheus returns, got ${typeof o.metrics === 'object' ? JSON.stringify(Object.keys(o.metrics ?? {})) : typeof o.metrics}`,
    )
  if (o.ui !== undefined && typeof o.ui !== 'boolean' && (typeof o.ui !== 'string' || o.ui === ''))
    throw new InvalidArgumentError(`ui must be a boolean or a directory, got ${JSON.stringify(o.ui)}`)
  if (o.clientKey !== undefined && typeof o.clientKey !== 'function')
    throw new InvalidArgumentError(`clientKey must be a function, got ${typeof o.clientKey}`)
  if (o.authorize !== undefined && typeof o.authorize !== 'function')
    throw new InvalidArgumentError(`authorize must be a function, got ${typeof o.authorize}`)
  const basePath = (o.basePath ?? '/v1/stream').replace(/\/+$/, '')
  if (!/^(\/[A-Za-z0-9_.~-]+)*$/.test(basePath))
    throw new InvalidArgumentError(`basePath must be a path like "/v1/stream", got ${JSON.stringify(o.basePath)}`)
  if (o.metrics !== undefined && basePath === '')
    throw new InvalidArgumentError(
      `metrics needs a basePath other than ${JSON.stringify(o.basePath)}: GET /metrics would hide the stream named "metrics"`,
    )
  let cors: ResolvedGatewayOptions['cors']
  if (o.cors === '*') cors = '*'
  else if (o.cors !== undefined) {
    const list = typeof o.cors === 'string' ? [o.cors] : o.cors
    if (!Array.isArray(list) || list.some((x) => typeof x !== 'string' || x === ''))
      throw new InvalidArgumentError(`cors must be '*' or a list of origins, got ${JSON.stringify(o.cors)}`)
    cors = new Set(list)
  }
  return {
    longPollMs: checkInt('longPollMs', o.longPollMs ?? 20_000, 1, 3_600_000),
    basePath,
    maxBodyBytes: checkInt('maxBodyBytes', o.maxBodyBytes ?? 8 * 1024 * 1024, 1, 256 * 1024 * 1024),
    maxReadBytes: checkInt('maxReadBytes', o.maxReadBytes ?? 1024 * 1024, 1, 256 * 1024 * 1024),
    sseMaxMs: checkInt('sseMaxMs', o.sseMaxMs ?? 60_000, 1, 24 * 3_600_000),
    cors,
    auth: o.auth === undefined || o.auth instanceof TokenAuth ? o.auth : TokenAuth.from(o.auth, 'createGateway() auth'),
    authorize: o.authorize,
    maxLivePerClient: checkInt('maxLivePerClient', o.maxLivePerClient ?? 64, 1, 1_000_000),
    clientKey: o.clientKey,
    ui: o.ui ?? false,
    statsIntervalMs: checkInt('statsIntervalMs', o.statsIntervalMs ?? 1000, 10, 3_600_000),
    metrics: o.metrics,
    subscriptions: o.subscriptions ?? false,
    publicUrl,
    compactEveryMs: checkInt('compactEveryMs', o.compactEveryMs ?? 30_000, 1, 24 * 3_600_000),
    tombstoneRetentionMs: checkInt(
      'tombstoneRetentionMs',
      o.tombstoneRetentionMs ?? DEFAULT_TOMBSTONE_RETENTION_MS,
      0,
      365 * 86_400_000,
    ),
  }
}
