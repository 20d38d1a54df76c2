// A page's cache of tails in IndexedDB (`tail(stream, { cache })`): per stream, the last messages
// read (up to a bound) as one contiguous range, and the token to read on from. Every change is one
// read-write transaction, so pages of one origin writing the same stream at once keep one range:
// a batch that overlaps what is stored adds only what lies past it, a batch after a gap starts the
// range again.
import type { BrowserMessage } from './message.js'
import { compareTokens } from './tokens.js'

const DB_NAME = 'twainmq-tail-cache'
const STREAMS = 'streams'
const MESSAGES = 'messages'

/** What is stored of a stream's range. */
interface RangeMeta {
  key: string
  /** The first message stored is the stream's first (the range was read from its start). */
  fromStart: boolean
  /** Where reading goes on after the last message stored. */
  resume: string
  /** Sequence numbers of the first stored message and of the next one. */
  first: number
  next: number
}

/** A message as stored (the stream is the range's). */
interface Stored {
  offset: string
  resume: string
  value: unknown
}

/** A cached message (its stream is the range's). */
export type CachedMessage = Omit<BrowserMessage<unknown>, 'stream'>

/**
 * A stream's cached range: its first `HEAD` messages, then the others, each as soon as it is read
 * (one transaction: both parts are of the same range, whatever other pages store meanwhile).
 */
export interface CachedRange {
  fromStart: boolean
  resume: string
  head: Promise<CachedMessage[]>
  rest: Promise<CachedMessage[]>
}

/** Messages read (and given) before the rest of a range: a page renders them while the rest loads. */
const HEAD = 500

// The parts of IndexedDB used here (the package is built without the DOM's types).
interface IdbRequest<T> {
  readonly result: T
  readonly error: unknown
  onsuccess: (() => void) | null
  onerror: (() => void) | null
}
interface IdbOpenRequest extends IdbRequest<IdbDatabase> {
  onupgradeneeded: (() => void) | null
}
interface IdbStore {
  get(key: unknown): IdbRequest<unknown>
  getAll(range: unknown): IdbRequest<unknown[]>
  put(value: unknown, key?: unknown): IdbRequest<unknown>
  delete(range: unknown): IdbRequest<unknown>
}
interface IdbTransaction {
  objectStore(name: string): IdbStore
  abort(): void
  readonly error: unknown
  oncomplete: (() => void) | null
  onerror: (() => void) | null
  onabort: (() => void) | null
}
interface IdbDatabase {
  transaction(stores: string[], mode: 'readonly' | 'readwrite'): IdbTransaction
  readonly objectStoreNames: { contains(name: string): boolean }
  createObjectStore(name: string, options?: { keyPath?: string }): IdbStore
}
interface IdbGlobals {
  indexedDB?: { open(name: string, version: number): IdbOpenRequest }
  IDBKeyRange?: { bound(lower: unknown, upper: unknown, lowerOpen?: boolean, upperOpen?: boolean): unknown }
}

/** IndexedDB of this page, or undefined (Node, a worker without it). */
function idb(): Required<IdbGlobals> | undefined {
  const g = globalThis as unknown as IdbGlobals
  return g.indexedDB !== undefined && g.IDBKeyRange !== undefined
    ? { indexedDB: g.indexedDB, IDBKeyRange: g.IDBKeyRange }
    : undefined
}

/** Keys `[key, from]` up to, not including, `[key, to]`. */
const seqs = (key: string, from: number, to: number): unknown =>
  (idb() as Required<IdbGlobals>).IDBKeyRange.bound([key, from], [key, to], false, true)

const done = <T>(r: IdbRequest<T>): Promise<T> =>
  new Promise<T>((resolve, reject) => {
    r.onsuccess = () => resolve(r.result)
    r.onerror = () => reject(r.error ?? new Error('IndexedDB request failed'))
  })

const finished = (t: IdbTransaction): Promise<void> =>
  new Promise<void>((resolve, reject) => {
    t.oncomplete = () => resolve()
    t.onerror = () => reject(t.error ?? new Error('IndexedDB transaction failed'))
    t.onabort = () => reject(t.error ?? new Error('IndexedDB transaction aborted'))
  })

let opened: Promise<IdbDatabase | undefined> | undefined

/** The cache database (made on first use); undefined where there is no IndexedDB. */
function database(): Promise<IdbDatabase | undefined> {
  opened ??= (async () => {
    const g = idb()
    if (g === undefined) return undefined
    const req = g.indexedDB.open(DB_NAME, 1)
    req.onupgradeneeded = () => {
      const db = req.result
      if (!db.objectStoreNames.contains(STREAMS)) db.createObjectStore(STREAMS, { keyPath: 'key' })
      if (!db.objectStoreNames.contains(MESSAGES)) db.createObjectStore(MESSAGES)
    }
    try {
      return await done(req)
    } catch {
      return undefined // refused (private mode, storage off): tails read without a cache
    }
  })()
  return opened
}

/** The range stored for `key`, or undefined (none, one not `wanted`, or no IndexedDB): its messages are read only then. */
export async function loadRange(
  key: string,
  wanted: (range: { fromStart: boolean }) => boolean = () => true,
): Promise<CachedRange | undefined> {
  const db = await database()
  if (db === undefined) return undefined
  const t = db.transaction([STREAMS, MESSAGES], 'readonly')
  const meta = (await done(t.objectStore(STREAMS).get(key))) as RangeMeta | undefined
  if (meta === undefined || !wanted(meta)) return undefined
  const split = Math.min(meta.first + HEAD, meta.next)
  const messages = t.objectStore(MESSAGES)
  // An empty key range ([k, n], [k, n]) with an open bound is a DataError: no read for no messages.
  const read = (from: number, to: number): Promise<Stored[]> =>
    from < to ? (done(messages.getAll(seqs(key, from, to))) as Promise<Stored[]>) : Promise.resolve([])
  const head = read(meta.first, split)
  const rest = read(split, meta.next)
  head.catch(() => undefined) // awaited by the reader, which reports a failure as a cache miss
  rest.catch(() => undefined)
  return { fromStart: meta.fromStart, resume: meta.resume, head, rest }
}

/**
 * Store `batch` (read after the range, `fromStart`: as the stream's first messages) in `key`'s
 * range, keeping at most `max` messages (the oldest go first).
 */
export async function appendRange(
  key: string,
  batch: ReadonlyArray<BrowserMessage<unknown>>,
  fromStart: boolean,
  max: number,
): Promise<void> {
  const db = await database()
  const head = batch[0]
  if (db === undefined || head === undefined) return
  const t = db.transaction([STREAMS, MESSAGES], 'readwrite')
  const streams = t.objectStore(STREAMS)
  const messages = t.objectStore(MESSAGES)
  const ended = finished(t)
  ended.catch(() => undefined) // awaited below; a failure before that is reported by the throw
  try {
    await store(streams, messages, key, batch, fromStart, max)
  } catch (e) {
    try {
      t.abort() // nothing of a half-made change is kept
    } catch {
      /* already finished */
    }
    throw e
  }
  await ended
}

/** The body of `appendRange`, inside its transaction. */
async function store(
  streams: IdbStore,
  messages: IdbStore,
  key: string,
  batch: ReadonlyArray<BrowserMessage<unknown>>,
  fromStart: boolean,
  max: number,
): Promise<void> {
  const head = batch[0] as BrowserMessage<unknown>
  let meta = (await done(streams.get(key))) as RangeMeta | undefined
  let fresh: ReadonlyArray<BrowserMessage<unknown>> = batch
  if (meta !== undefined && compareTokens(head.offset, meta.resume) <= 0) {
    // Contiguous or overlapping (another page stored part of it): only what lies past the range.
    const resume = meta.resume
    fresh = batch.filter((m) => compareTokens(m.offset, resume) >= 0)
    if (fresh.length === 0) return // all of it stored already (by another page): the range is as it was
  } else {
    // No range yet, or a gap after it: the range starts again here.
    if (meta !== undefined) messages.delete(seqs(key, meta.first, meta.next))
    meta = { key, fromStart, resume: head.offset, first: 0, next: 0 }
  }
  for (const m of fresh)
    messages.put({ offset: m.offset, resume: m.resume, value: m.value } satisfies Stored, [key, meta.next++])
  meta.resume = (fresh[fresh.length - 1] as BrowserMessage<unknown>).resume
  if (meta.next - meta.first > max) {
    const keepFrom = meta.next - max
    messages.delete(seqs(key, meta.first, keepFrom))
    meta.first = keepFrom
    meta.fromStart = false
  }
  streams.put(meta)
}

/** Forget `key`'s range (its stream is not the one cached any more: deleted and made again, or trimmed past it). */
export async function clearRange(key: string): Promise<void> {
  const db = await database()
  if (db === undefined) return
  const t = db.transaction([STREAMS, MESSAGES], 'readwrite')
  const ended = finished(t)
  const meta = (await done(t.objectStore(STREAMS).get(key))) as RangeMeta | undefined
  if (meta !== undefined) {
    if (meta.first < meta.next) t.objectStore(MESSAGES).delete(seqs(key, meta.first, meta.next))
    t.objectStore(STREAMS).delete(key)
  }
  await ended
}
