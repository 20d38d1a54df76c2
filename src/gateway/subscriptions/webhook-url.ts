import { isIP } from 'node:net'

/**
 * Whether a subscription may send its wakes to `raw`: `https` to a public host, or plain `http`
 * only to this machine (`localhost`, `127.x.y.z`, `[::1]`) for development. Refused: other
 * schemes, `http` elsewhere, and `https` to private, loopback, link-local or unspecified IPv4
 * addresses and to IPv6 literals (the gateway would otherwise be a way into its own network).
 * Returns why not, or undefined when allowed.
 */
export function webhookUrlProblem(raw: string): string | undefined {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return `webhook.url ${JSON.stringify(raw)} is not a URL`
  }
  const host = url.hostname.toLowerCase().replace(/\.$/, '')
  if (url.username !== '' || url.password !== '') return `webhook.url must not carry credentials`
  if (url.protocol === 'http:') {
    if (host === 'localhost' || host === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)) return undefined
    return `webhook.url ${JSON.stringify(raw)} uses http: only http://localhost and http://127.x.y.z are allowed (else https)`
  }
  if (url.protocol !== 'https:') return `webhook.url ${JSON.stringify(raw)} must use https`
  if (host === 'localhost' || host.endsWith('.localhost'))
    return `webhook.url ${JSON.stringify(raw)}: use http://localhost for a local receiver`
  const bare = host.startsWith('[') ? host.slice(1, -1) : host
  if (isIP(bare) === 6) return `webhook.url ${JSON.stringify(raw)}: IPv6 literal hosts are not accepted`
  if (isIP(bare) === 4 && privateIpv4(bare))
    return `webhook.url ${JSON.stringify(raw)} targets a private, loopback or link-local address`
  return undefined
}

function privateIpv4(host: string): boolean {
  const [a, b] = host.split('.').map(Number) as [number, number]
  return (
    a === 0 ||
    a === 10 ||
    a === 127 ||
    (a === 100 && b >= 64 && b <= 127) ||
    (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 198 && (b === 18 || b === 19)) ||
    a >= 224 // multicast, reserved, broadcast
  )
}
