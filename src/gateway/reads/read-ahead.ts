import type { GatewayContext } from '../config/context.js'
import { readPage, type PageResult, type Position } from './read.js'
import { accessKey, type StreamView } from '../stream/stream-view.js'

/** How long a page read ahead waits for the request that wants it. */
const KEEP_MS = 1000
/** Most bytes of pages read ahead that one store keeps waiting (past it, no page is read ahead). */
const MAX_WAITING_BYTES = 64 * 1024 * 1024

interface Ahead {
  page: Promise<PageResult>
  /** What the page may hold (its bound until it is read). */
  bytes: number
  timer: NodeJS.Timeout
}

/** A store's pages read ahead, the bytes they may hold, and the reads scheduled or running. */
interface Aheads {
  pages: Map<string, Ahead>
  bytes: number
  pending: Set<Promise<unknown>>
}

const byStore = new WeakMap<object, Aheads>()

function aheadsOf(store: object): Aheads {
  let a = byStore.get(store)
  if (!a) byStore.set(store, (a = { pages: new Map(), bytes: 0, pending: new Set() }))
  return a
}

const keyOf = (v: StreamView, at: Position, maxBytes: number): string =>
  `${accessKey(v)}|${v.chain.length}|${at.seg}:${at.offset}|${maxBytes}`

function drop(all: Aheads, key: string, a: Ahead): void {
  clearTimeout(a.timer)
  if (all.pages.get(key) !== a) return
  all.pages.delete(key)
  all.bytes -= a.bytes
}

function pending(all: Aheads, work: Promise<unknown>): void {
  const p = work
    .then(
      () => undefined,
      () => undefined,
    )
    .finally(() => all.pending.delete(p))
  all.pending.add(p)
}

/** Start reading the page at `at` for the request expected next (unless one is waiting or memory is short). */
function readAhead(ctx: GatewayContext, v: StreamView, at: Position, maxBytes: number): void {
  const all = aheadsOf(ctx.store)
  const key = keyOf(v, at, maxBytes)
  if (all.pages.has(key) || all.bytes + maxBytes > MAX_WAITING_BYTES || ctx.closing.aborted) return
  const page = readPage(ctx, v, at, maxBytes)
  const a: Ahead = { page, bytes: maxBytes, timer: setTimeout(() => drop(all, key, a), KEEP_MS).unref() }
  all.pages.set(key, a)
  all.bytes += maxBytes
  page.catch(() => drop(all, key, a))
  pending(all, page)
  ctx.background(page)
}

/** Resolves when the reads ahead scheduled or running now are done (for tests). */
export async function readAheadSettled(store: object): Promise<void> {
  const all = aheadsOf(store)
  while (all.pending.size > 0) await Promise.all([...all.pending])
}

/** Whether a page read under an earlier view of the stream is what a read under `v` gives. */
function stillValid(r: PageResult, v: StreamView): boolean {
  const last = v.chain.length - 1
  // Up to date: only at the same tail. Full: its records lie below a tail that never moves back
  // (unless a rollback moved it below them, seen here).
  if (r.upToDate) return r.next.seg === last && r.next.offset === v.tail
  return r.next.seg < last || r.next.offset <= v.tail
}

/**
 * A catch-up page (see `readPage`), read ahead when the last page of the same stream ended here. A
 * client catching up asks for page after page, each at the offset the last one ended at: a full
 * page starts the read of the next at once, so it is built while the client still receives and
 * parses this one (decision 164). A page read ahead is used only for the same incarnation and
 * chain of the stream, and only while it is what a read now would give (`stillValid`), else the
 * page is read again.
 */
export async function catchUpPage(
  ctx: GatewayContext,
  v: StreamView,
  from: Position,
  maxBytes: number,
): Promise<PageResult> {
  const all = aheadsOf(ctx.store)
  const key = keyOf(v, from, maxBytes)
  const hit = all.pages.get(key)
  let page: PageResult | undefined
  if (hit) {
    drop(all, key, hit)
    const ready = await hit.page.catch(() => undefined)
    if (ready && stillValid(ready, v)) page = ready
  }
  page ??= await readPage(ctx, v, from, maxBytes)
  // After this page is written: reads are synchronous inside, so one started now would delay it.
  const next = page.next
  if (!page.upToDate)
    pending(all, new Promise<void>((resolve) => setImmediate(() => resolve(readAhead(ctx, v, next, maxBytes)))))
  return page
}
