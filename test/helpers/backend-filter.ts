/**
 * `TWAINMQ_TEST_BACKENDS`: a comma-separated list of store kinds (`file`, `twainmq-v1`, `redis`,
 * `cluster`) the contract and conformance suites run on; unset or empty, all of them. The fast tier
 * (`npm run test:fast`) sets it to the file kinds, so the edit loop needs no Redis.
 */
const KNOWN = ['file', 'twainmq-v1', 'redis', 'cluster'] as const

function selected(): ReadonlySet<string> | undefined {
  const raw = process.env.TWAINMQ_TEST_BACKENDS?.trim()
  if (!raw) return undefined
  const names = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  const bad = names.filter((n) => !(KNOWN as readonly string[]).includes(n))
  if (bad.length)
    throw new Error(`TWAINMQ_TEST_BACKENDS names unknown kinds ${JSON.stringify(bad)}: use ${KNOWN.join(', ')}`)
  return new Set(names)
}

/** The kinds of `all` that the environment selects, in their order. */
export function selectKinds<T extends { name: string }>(all: T[]): T[] {
  const only = selected()
  return only ? all.filter((k) => only.has(k.name)) : all
}
