import type { Backend } from '../backends/backend.js'

const RETENTION_EVERY_MS = 2000

/**
 * `retention: { consumed: true }` for a consumer's topics: after its commits (or acknowledgements),
 * at most every few seconds, the backend trims what every group of the topic has committed
 * (`Backend.applyRetention`, whose `consumed` step is the one `backends/trim-consumed.ts`).
 */
export class ConsumedRetention {
  private readonly topics: string[] = []
  private last = 0

  constructor(
    private readonly backend: Backend,
    private readonly onError: (e: unknown) => void,
  ) {}

  /** Find which of `topics` have `retention: { consumed: true }` (rejects for a missing topic). */
  async load(topics: readonly string[]): Promise<void> {
    for (const t of topics) if ((await this.backend.getTopic(t)).retention.consumed) this.topics.push(t)
  }

  /** After a commit: trim, unless that was done less than a few seconds ago. */
  committed(): void {
    const now = Date.now()
    if (now - this.last < RETENTION_EVERY_MS || this.topics.length === 0) return
    this.last = now
    for (const t of this.topics) void this.backend.applyRetention(t).catch(this.onError)
  }
}
