import type { SubscriptionKeys } from './keys.js'
import type { StreamInfo } from './subscription.js'

/** The body of a webhook wake. */
export interface Delivery {
  subscription_id: string
  wake_id: string
  generation: number
  streams: StreamInfo[]
  callback_url: string
  callback_token: string
}

/** How long one delivery may take before it counts as failed. */
const DELIVERY_TIMEOUT_MS = 10_000

/**
 * POST a wake to a webhook, signed (`Webhook-Signature`, see `SubscriptionKeys.signature`).
 * Resolves with whether the receiver finished the wake in its answer (`{"done": true}`), or
 * undefined when it did not answer 2xx in time (the caller retries).
 */
export async function deliverWake(
  url: string,
  wake: Delivery,
  keys: SubscriptionKeys,
  stop: AbortSignal,
): Promise<{ done: boolean } | undefined> {
  const body = JSON.stringify(wake)
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'webhook-signature': keys.signature(body) },
      body,
      redirect: 'manual', // a redirect could lead the request inside the network the URL check kept it out of
      signal: AbortSignal.any([stop, AbortSignal.timeout(DELIVERY_TIMEOUT_MS)]),
    })
    if (!res.ok) {
      await res.body?.cancel()
      return undefined
    }
    let answer: unknown
    try {
      answer = await res.json()
    } catch {
      answer = undefined
    }
    return { done: (answer as { done?: unknown } | undefined)?.done === true }
  } catch {
    return undefined
  }
}
