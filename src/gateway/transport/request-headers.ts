import { HttpStatusError, type GwRequest } from './http.js'

const UINT_RE = /^(0|[1-9][0-9]*)$/

/** `Stream-Closed: true` (case-insensitive); any other value counts as absent. */
export const wantsClose = (req: GwRequest): boolean => req.header('stream-closed')?.trim().toLowerCase() === 'true'

/** A non-negative integer header (`Stream-TTL`, `Stream-Fork-Sub-Offset`), 400 when malformed. */
export function uintHeader(req: GwRequest, name: string): number | undefined {
  const raw = req.header(name)
  if (raw === undefined) return undefined
  if (!UINT_RE.test(raw) || !Number.isSafeInteger(Number(raw)))
    throw new HttpStatusError(
      400,
      `${name} must be a non-negative integer without leading zeros, got ${JSON.stringify(raw)}`,
    )
  return Number(raw)
}

/** `Stream-Expires-At` as given and in ms; 400 when it is not an RFC 3339 time. */
export function expiresAtHeader(req: GwRequest): { raw: string; ms: number } | undefined {
  const raw = req.header('stream-expires-at')
  if (raw === undefined) return undefined
  const ms = Date.parse(raw)
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i.test(raw.trim()) || Number.isNaN(ms)) {
    throw new HttpStatusError(400, `Stream-Expires-At must be an RFC 3339 time, got ${JSON.stringify(raw)}`)
  }
  return { raw, ms }
}

export interface ProducerHeaders {
  id: string
  epoch: number
  seq: number
}

/** The three producer headers, or undefined when none is sent; 400 when some or malformed. */
export function producerHeaders(req: GwRequest): ProducerHeaders | undefined {
  const id = req.header('producer-id')
  const epoch = req.header('producer-epoch')
  const seq = req.header('producer-seq')
  if (id === undefined && epoch === undefined && seq === undefined) return undefined
  if (id === undefined || epoch === undefined || seq === undefined)
    throw new HttpStatusError(400, 'Producer-Id, Producer-Epoch and Producer-Seq must be sent together')
  if (id === '') throw new HttpStatusError(400, 'Producer-Id must not be empty')
  const num = (name: string, v: string): number => {
    if (!/^\d+$/.test(v) || !Number.isSafeInteger(Number(v)))
      throw new HttpStatusError(400, `${name} must be an integer 0..2^53-1, got ${JSON.stringify(v)}`)
    return Number(v)
  }
  return { id, epoch: num('Producer-Epoch', epoch), seq: num('Producer-Seq', seq) }
}

/** The content type as a stream stores it: the given one, or `application/octet-stream` when absent or not `type/subtype`. */
export function storedContentType(raw: string | undefined): string | undefined {
  if (raw === undefined || raw.trim() === '') return undefined
  return /^[\w.+-]+\/[\w.+-]+/.test(raw.trim()) ? raw.trim() : 'application/octet-stream'
}
