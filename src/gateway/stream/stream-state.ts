import type { TopicStore } from '../../backends/backend.js'
import { perStore } from './per-store.js'
import { closeParked, park, takeReader } from './reader-pool.js'
import { CLOSE_TYPE, DELETE_TYPE, H_EPOCH, H_PRODUCER, H_SEQ, H_STREAM_SEQ } from './records.js'

/** A producer's last accepted epoch and sequence number. */
export interface ProducerState {
  epoch: number
  seq: number
}

/**
 * The mutable state of a gateway stream, folded from its log (so it is crash-safe and shared by
 * every process over the store): producer epochs/seqs and the last `Stream-Seq` from the headers of
 * the appends, the close marker and the soft-delete marker.
 */
export interface FoldedState {
  /** The partition end this fold covers. */
  covered: number
  producers: Map<string, ProducerState>
  streamSeq: string | undefined
  /** Offset of the close marker (the stream's final offset). */
  closedAt: number | undefined
  /** `id/epoch/seq` of the producer append that closed the stream. */
  closedBy: string | undefined
  /** Offset of the soft-delete marker. */
  deletedAt: number | undefined
  /** Timestamp of the newest record (ms). */
  lastWrite: number
}

export const producerTuple = (id: string, epoch: number, seq: number): string => `${id}\n${epoch}\n${seq}`

const foldsOf = perStore<{ state: FoldedState; running: Promise<FoldedState> | undefined }>()

function fresh(): FoldedState {
  return {
    covered: 0,
    producers: new Map(),
    streamSeq: undefined,
    closedAt: undefined,
    closedBy: undefined,
    deletedAt: undefined,
    lastWrite: 0,
  }
}

const NO_HEADERS: Record<string, string> = {}

async function fold(store: TopicStore, topic: string, incarnation: number, state: FoldedState): Promise<FoldedState> {
  const reader = await takeReader(store, 'fold', topic, 0, incarnation, state.covered)
  let ok = false
  try {
    for (;;) {
      // Offsets, times, types and headers are all a fold needs: a raw read decodes no key or value.
      const batch = await reader.readRaw(1000)
      if (batch.length === 0) break
      for (const m of batch) {
        state.lastWrite = Math.max(state.lastWrite, m.timestamp)
        if (state.closedAt !== undefined && m.type !== DELETE_TYPE) continue // nothing after the close counts
        const h = m.headers ?? NO_HEADERS
        const id = h[H_PRODUCER]
        let tuple: string | undefined
        if (id !== undefined) {
          const epoch = Number(h[H_EPOCH])
          const seq = Number(h[H_SEQ])
          state.producers.set(id, { epoch, seq })
          tuple = producerTuple(id, epoch, seq)
        }
        if (h[H_STREAM_SEQ] !== undefined) state.streamSeq = h[H_STREAM_SEQ]
        if (m.type === CLOSE_TYPE) {
          state.closedAt = m.offset
          state.closedBy = tuple ?? state.closedBy
        } else if (m.type === DELETE_TYPE) state.deletedAt ??= m.offset
      }
      state.covered = reader.next
    }
    ok = true
    return state
  } finally {
    if (ok) park(store, 'fold', topic, 0, incarnation, reader)
    else await reader.close()
  }
}

/**
 * The state of a gateway topic caught up to (at least) every append that resolved before this
 * call. Folds are cached per topic incarnation and continue from the offset they cover; concurrent
 * callers share one fold and the next caller starts another.
 */
export async function catchUp(store: TopicStore, topic: string, incarnation: number): Promise<FoldedState> {
  const key = `${topic}@${incarnation}`
  const folds = foldsOf(store)
  let entry = folds.get(key)
  if (!entry) {
    if (folds.size > 10_000) folds.clear()
    entry = { state: fresh(), running: undefined }
    folds.set(key, entry)
  }
  const e = entry
  const previous = e.running
  const run = (async () => {
    if (previous) await previous.catch(() => undefined)
    return fold(store, topic, incarnation, e.state)
  })()
  e.running = run
  try {
    return await run
  } finally {
    if (e.running === run) e.running = undefined
  }
}

/** Forget a topic incarnation's fold (after it is deleted). */
export function forgetFold(store: TopicStore, topic: string, incarnation: number): void {
  foldsOf(store).delete(`${topic}@${incarnation}`)
  closeParked(store, topic)
}
