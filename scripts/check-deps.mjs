#!/usr/bin/env node
// Dependency-direction check: every relative import in src/ must go from a layer to one it may use
// (the layering in docs/architecture.md), packages may only be imported where listed, and no
// module may import itself through a cycle. Prints each violation and exits 1 if there is any.
//   node scripts/check-deps.mjs [srcDir]
import { readFileSync, readdirSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'

/** Layer → the layers it may import (besides itself). Keep in step with docs/architecture.md. */
const MAY_USE = {
  core: [],
  backends: ['core'],
  'backends/file': ['backends', 'core'],
  'backends/redis': ['backends', 'core'],
  'compat/twainmq': ['backends/file', 'backends', 'core'],
  stream: ['backends', 'core'],
  // OpenTelemetry (an optional peer dependency): spans, propagation and metrics over the store
  // contract; the producer, the consumer, the facade and the gateway call it.
  telemetry: ['backends', 'core'],
  producer: ['telemetry', 'backends', 'core'],
  consumer: ['producer', 'stream', 'telemetry', 'backends', 'core'], // producer: dead letters are written through one
  operators: ['core'],
  'operators/rx': ['operators', 'core'],
  facade: [
    'consumer',
    'producer',
    'stream',
    'telemetry',
    'compat/twainmq',
    'backends/file',
    'backends/redis',
    'backends',
    'core',
  ],
  index: ['facade', 'consumer', 'producer', 'stream', 'compat/twainmq', 'backends', 'core'],
  'operators/index': ['operators', 'core'],
  // The CLI works through the public API; it checks arguments with the library's own rules
  // (core, the consumer's option checks) and runs `check`/`repair` of the file backend; `serve`
  // runs the HTTP gateway (and `--metrics` the Prometheus metrics) through their entry points.
  cli: ['index', 'gateway', 'prometheus', 'consumer', 'backends/file', 'core'],
  // The HTTP gateway (`twainmq/gateway`) sits above the facade: it takes a Twain and works on the
  // store under it (the store contract, for compare-and-append), never a particular backend.
  gateway: ['index', 'facade', 'stream', 'telemetry', 'backends', 'core'],
  // The browser client (`twainmq/browser`) runs without Node: of the rest of src it may use only
  // the files in BROWSER_SAFE, and nothing it reaches may import a node: built-in (checked below).
  browser: ['core'],
  // Prometheus metrics (`twainmq/prometheus`, prom-client an optional peer dependency): the store's
  // figures through the gateway's overview reader, and the gateway's through its metrics sink.
  prometheus: ['gateway', 'facade', 'backends', 'core'],
}

/**
 * The rooms of the gateway (src/gateway/<room>/; its root holds the entry point, `gateway.ts` and
 * the router, which may use every room) → the rooms each may import besides itself. `config` is
 * the options and the handlers' context: it names the services the context carries (types of
 * auth, reads, overview), and every room takes the context. Keep in step with docs/architecture.md.
 */
const GATEWAY_ROOMS = {
  transport: [],
  stream: ['transport', 'config'],
  auth: ['stream', 'transport', 'config'],
  reads: ['stream', 'transport', 'config'],
  overview: ['reads', 'auth', 'stream', 'transport', 'config'],
  handlers: ['reads', 'auth', 'stream', 'transport', 'config'],
  subscriptions: ['handlers', 'reads', 'auth', 'stream', 'transport', 'config'],
  config: ['auth', 'reads', 'overview', 'transport'],
}

/** The gateway room of a file under src/gateway ('' for its root), or undefined outside it. */
function gatewayRoom(file) {
  const parts = relative(src, file).split(sep)
  if (parts[0] !== 'gateway') return undefined
  return parts.length === 2 ? '' : parts[1]
}

/** The only files outside src/browser that the browser layer may import (they import nothing). */
const BROWSER_SAFE = ['core/errors.ts']

/** Layers the facade may load only with a dynamic `import()` (or `import type`): a file-backend app never loads ioredis. */
const DYNAMIC_ONLY = { facade: ['backends/redis'] }

/** Packages (and node: built-ins, always allowed) per layer; a layer not listed may use none. */
const PACKAGES = {
  'backends/file': ['chokidar'],
  'backends/redis': ['ioredis'],
  operators: ['ix', 'rxjs'],
  'operators/rx': ['rxjs'],
  stream: ['rxjs', 'ix'],
  consumer: ['rxjs'],
  cli: ['commander', 'cli-progress'],
  browser: ['@durable-streams/client'],
  telemetry: ['@opentelemetry/api'],
  prometheus: ['prom-client'],
}

/**
 * Packages a layer may load only with a dynamic `import()` (or `import type`): optional peer
 * dependencies, which an application may not have (twainmq costs nothing without them).
 */
const DYNAMIC_PACKAGES = { telemetry: ['@opentelemetry/api'], prometheus: ['prom-client'] }

/**
 * Inside the consumer layer: one folder per group mode beside the member core (the folder's root
 * files). A mode uses the core and never the other mode; the core reaches into no mode, except
 * the root files in MODE_PICKERS, which make a member of the mode asked for.
 */
const CONSUMER_MODES = ['partitioned', 'shared']
const MODE_PICKERS = ['consumer/consumer-set.ts']

const src = resolve(process.argv[2] ?? 'src')

function filesUnder(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name)
    return e.isDirectory() ? filesUnder(p) : p.endsWith('.ts') ? [p] : []
  })
}

/** The layer of a source file: its top folder, or `backends/<x>`, `operators/rx`, `compat/<x>`; at the root only `index.ts` (layer `index`). */
function layerOf(file) {
  const parts = relative(src, file).split(sep)
  // The root holds only the public entry point; the facade (Twain, opening, topic options) is facade/.
  if (parts.length === 1) return parts[0] === 'index.ts' ? 'index' : 'root (only index.ts belongs here)'
  if (parts[0] === 'operators' && parts.length === 2 && parts[1] === 'index.ts') return 'operators/index'
  if ((parts[0] === 'backends' || parts[0] === 'operators' || parts[0] === 'compat') && parts.length > 2)
    return `${parts[0]}/${parts[1]}`
  return parts[0]
}

/** A consumer file's mode folder ('' for the member core at the root), or undefined outside src/consumer. */
function consumerModeOf(file) {
  const parts = relative(src, file).split(sep)
  if (parts[0] !== 'consumer') return undefined
  return parts.length > 2 ? parts[1] : ''
}

const IMPORT =
  /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|(?:^|\n)\s*import\s+['"]([^'"]+)['"]/g
const files = filesUnder(src)
const graph = new Map()
const nodeImports = new Map()
const problems = []
for (const file of files) {
  const from = layerOf(file)
  const rel = relative(process.cwd(), file)
  if (!(from in MAY_USE))
    problems.push(`${rel}: layer "${from}" is not in the layering table (scripts/check-deps.mjs, docs/architecture.md)`)
  const mode = consumerModeOf(file)
  if (mode && !CONSUMER_MODES.includes(mode))
    problems.push(
      `${rel}: "consumer/${mode}" is not a group mode's folder (CONSUMER_MODES in scripts/check-deps.mjs, docs/architecture.md)`,
    )
  const text = readFileSync(file, 'utf8')
  const deps = []
  for (const m of text.matchAll(IMPORT)) {
    const spec = m[1] ?? m[2] ?? m[3]
    if (spec.startsWith('node:')) {
      nodeImports.set(file, spec)
      continue
    }
    if (!spec.startsWith('.')) {
      const pkg = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]
      if (!(PACKAGES[from] ?? []).includes(pkg))
        problems.push(`${rel}: layer "${from}" may not import the package "${pkg}"`)
      else if (
        (DYNAMIC_PACKAGES[from] ?? []).includes(pkg) &&
        m[2] === undefined &&
        !/^\s*(import|export)\s+type\s/.test(m[0])
      )
        problems.push(`${rel}: layer "${from}" may load the package "${pkg}" only with a dynamic import() (${spec})`)
      continue
    }
    const target = resolve(dirname(file), spec).replace(/\.js$/, '.ts')
    deps.push(target)
    const to = layerOf(target)
    if (to !== from && !(MAY_USE[from] ?? []).includes(to))
      problems.push(`${rel}: layer "${from}" may not import "${to}" (${spec})`)
    else if (
      from === 'browser' &&
      to !== 'browser' &&
      !BROWSER_SAFE.includes(relative(src, target).split(sep).join('/'))
    ) {
      problems.push(
        `${rel}: the browser layer may import only ${BROWSER_SAFE.join(', ')} outside src/browser, not ${spec}`,
      )
    }
    const fromRoom = gatewayRoom(file)
    const toRoom = gatewayRoom(target)
    if (fromRoom !== undefined && toRoom !== undefined && fromRoom !== '' && toRoom !== fromRoom) {
      if (!(fromRoom in GATEWAY_ROOMS))
        problems.push(
          `${rel}: gateway room "${fromRoom}" is not in GATEWAY_ROOMS (scripts/check-deps.mjs, docs/architecture.md)`,
        )
      else if (toRoom === '' || !GATEWAY_ROOMS[fromRoom].includes(toRoom))
        problems.push(
          `${rel}: gateway room "${fromRoom}" may not import ${toRoom === '' ? "the gateway's root" : `room "${toRoom}"`} (${spec})`,
        )
    }
    const toMode = consumerModeOf(target)
    if (
      mode !== undefined &&
      toMode &&
      toMode !== mode &&
      !(mode === '' && MODE_PICKERS.includes(relative(src, file).split(sep).join('/')))
    ) {
      problems.push(
        `${rel}: ${mode ? `the consumer mode "${mode}"` : 'the member core (consumer/)'} may not import the mode "${toMode}" (${spec})`,
      )
    }
    const eager = m[2] === undefined && !/^\s*(import|export)\s+type\s/.test(m[0])
    if (eager && (DYNAMIC_ONLY[from] ?? []).includes(to))
      problems.push(`${rel}: layer "${from}" may load "${to}" only with a dynamic import() (${spec})`)
  }
  graph.set(file, deps)
}

// The browser layer's whole import graph is free of node: built-ins (each offender named once).
const reported = new Set()
for (const file of files.filter((f) => layerOf(f) === 'browser')) {
  const seen = new Set([file])
  const todo = [file]
  while (todo.length > 0) {
    const f = todo.pop()
    if (nodeImports.has(f) && !reported.has(f) && reported.add(f))
      problems.push(
        `${relative(process.cwd(), file)}: reaches ${relative(src, f)}, which imports ${nodeImports.get(f)} (the browser entry must not load Node built-ins)`,
      )
    for (const d of graph.get(f) ?? []) if (!seen.has(d)) seen.add(d) && todo.push(d)
  }
}

// Import cycles between modules (type-only imports included: they still tie the files together).
const state = new Map()
function visit(file, path) {
  state.set(file, 'open')
  for (const dep of graph.get(file) ?? []) {
    if (state.get(dep) === 'open') {
      const cycle = [...path.slice(path.indexOf(dep)), dep].map((f) => relative(src, f))
      problems.push(`import cycle: ${cycle.join(' -> ')}`)
    } else if (!state.has(dep) && graph.has(dep)) visit(dep, [...path, dep])
  }
  state.set(file, 'done')
}
for (const file of files) if (!state.has(file)) visit(file, [file])

if (problems.length > 0) {
  for (const p of problems) console.error(p)
  console.error(`check-deps: ${problems.length} violation${problems.length === 1 ? '' : 's'} in ${files.length} files`)
  process.exit(1)
}
console.log(`check-deps: ${files.length} files, layering respected, no import cycles`)
