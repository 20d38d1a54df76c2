/**
 * What ioredis's reply decoder costs per entry of an `XREADGROUP` reply, apart from any server or
 * network: the same 1,000-entry reply (entries as twainmq writes them: ID `<offset>-1`, fields r
 * with a `size`-byte record and p) fed in 64 KiB chunks to the decoder every ioredis 6 connection
 * uses (`built/resp/decoder.js`, set up as its DataHandler does, replies as Buffers), warm. A client
 * that reads `XREADGROUP` replies through ioredis pays this for every message before any work of
 * its own.
 */
import { createRequire } from 'node:module'
import { median } from './stats.js'

interface DecoderModule {
  Decoder: new (config: {
    getTypeMapping: () => object
    onReply: (r: unknown) => void
    onErrorReply: (e: unknown) => void
    onPush: (r: unknown) => void
  }) => { write(chunk: Buffer): void }
  RESP_TYPES: Record<
    'SIMPLE_STRING' | 'BLOB_STRING' | 'VERBATIM_STRING' | 'BIG_NUMBER' | 'DOUBLE' | 'BOOLEAN' | 'MAP' | 'SET',
    number
  >
}

const ENTRIES = 1000

/** The RESP2 bytes of an `XREADGROUP` reply of `ENTRIES` entries. */
function xreadgroupReply(size: number): Buffer {
  const bulk = (s: string) => `$${Buffer.byteLength(s)}\r\n${s}\r\n`
  const record = 'x'.repeat(size)
  const parts = [`*1\r\n*2\r\n${bulk('twainmq:{t:0}')}*${ENTRIES}\r\n`]
  for (let i = 0; i < ENTRIES; i++)
    parts.push(`*2\r\n${bulk(`${i}-1`)}*4\r\n${bulk('r')}${bulk(record)}${bulk('p')}${bulk('producer-1')}`)
  return Buffer.from(parts.join(''))
}

/** µs per entry the decoder takes (median of `rounds` timings of 200 replies each, after a warm-up). */
export function decoderMicrosPerEntry(size: number, rounds = 5): number {
  const { Decoder, RESP_TYPES: T } = createRequire(import.meta.url)('ioredis/built/resp/decoder.js') as DecoderModule
  const mapping = {
    [T.SIMPLE_STRING]: Buffer,
    [T.BLOB_STRING]: Buffer,
    [T.VERBATIM_STRING]: Buffer,
    [T.BIG_NUMBER]: String,
    [T.DOUBLE]: Buffer,
    [T.BOOLEAN]: Number,
    [T.MAP]: Array,
    [T.SET]: Array,
  }
  let replies = 0
  const decoder = new Decoder({
    getTypeMapping: () => mapping,
    onReply: () => void replies++,
    onErrorReply: () => undefined,
    onPush: () => undefined,
  })
  const reply = xreadgroupReply(size)
  const chunks: Buffer[] = []
  for (let i = 0; i < reply.length; i += 65536) chunks.push(reply.subarray(i, i + 65536))
  const decode = (times: number) => {
    for (let k = 0; k < times; k++) for (const c of chunks) decoder.write(c)
  }
  decode(300)
  const times: number[] = []
  for (let r = 0; r < rounds; r++) {
    const t0 = performance.now()
    decode(200)
    times.push(((performance.now() - t0) * 1000) / (200 * ENTRIES))
  }
  if (replies !== 300 + 200 * rounds)
    throw new Error(`the decoder returned ${replies} replies, expected ${300 + 200 * rounds}`)
  return median(times)
}
