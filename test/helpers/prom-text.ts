/** One sample of a Prometheus text exposition. */
export interface PromSample {
  name: string
  labels: Record<string, string>
  value: number
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g

/** The samples of an exposition in the Prometheus text format (comments left out). */
export function parseExposition(text: string): PromSample[] {
  const out: PromSample[] = []
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const m = LINE.exec(line)
    if (!m) throw new Error(`not an exposition line: ${JSON.stringify(line)}`)
    const labels: Record<string, string> = {}
    for (const l of (m[2] ?? '').matchAll(LABEL)) labels[l[1] as string] = (l[2] as string).replace(/\\(.)/g, '$1')
    out.push({ name: m[1] as string, labels, value: Number(m[3]) })
  }
  return out
}

/** The samples named `name` whose labels include `labels`. */
export function samplesOf(
  samples: readonly PromSample[],
  name: string,
  labels: Record<string, string> = {},
): PromSample[] {
  return samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
}

/** The value of the one sample named `name` with `labels`; throws when there is none or more than one. */
export function valueOf(samples: readonly PromSample[], name: string, labels: Record<string, string> = {}): number {
  const found = samplesOf(samples, name, labels)
  if (found.length !== 1)
    throw new Error(`${found.length} samples of ${name} ${JSON.stringify(labels)}: ${JSON.stringify(found)}`)
  return (found[0] as PromSample).value
}
