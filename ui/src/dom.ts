// Small DOM helpers: elements built with textContent only (values from the store are never HTML).

type Child = Node | string | number | null | undefined

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag)
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v)
  for (const c of children) if (c !== null && c !== undefined) e.append(typeof c === 'number' ? String(c) : c)
  return e
}

export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const e = document.getElementById(id)
  if (!e) throw new Error(`the page has no #${id}`)
  return e as T
}

/** Show `message` in an alert element (or hide it with undefined). */
export function showError(target: HTMLElement, message: string | undefined): void {
  target.hidden = message === undefined
  target.textContent = message ?? ''
}

/** Keep a select's options equal to `values` (in order), keeping the current choice when it is still there. */
export function syncOptions(select: HTMLSelectElement, values: readonly string[]): boolean {
  const now = [...select.options].map((o) => o.value)
  if (now.length === values.length && now.every((v, i) => v === values[i])) return false
  const chosen = select.value
  select.replaceChildren(...values.map((v) => el('option', { value: v }, v)))
  if (values.includes(chosen)) select.value = chosen
  return true
}

/** A value as text: JSON pretty-printed (or compact), strings as they are, bytes as hex. */
export function formatValue(value: unknown, pretty: boolean): string {
  if (typeof value === 'string') return value
  if (value instanceof Uint8Array)
    return (
      [...value.subarray(0, 256)].map((b) => b.toString(16).padStart(2, '0')).join(' ') +
      (value.length > 256 ? ' …' : '')
    )
  return JSON.stringify(value, null, pretty ? 2 : undefined) ?? String(value)
}

/**
 * A message's position for display: the twainmq offset in a gateway token (`<incarnation>_<offset>`),
 * `+n` for the browser client's `<token>,<n>` form (the n-th message after it), else the token.
 */
export function shownOffset(token: string): string {
  const m = /^[0-9]+_([0-9]+)(?:,([0-9]+))?$/.exec(token)
  if (!m) return token
  return m[2] === undefined ? String(Number(m[1])) : `${Number(m[1])}+${m[2]}`
}
