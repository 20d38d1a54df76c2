// The history panel: pages of a stream with the browser client's history(stream, { from, limit }).
// Next reads on from the last message's resume token; Prev goes back to the previous page's start.
import { connect, type BrowserMessage } from './client.js'
import { byId, el, formatValue, showError, shownOffset } from './dom.js'

export class HistoryPanel {
  private stream = ''
  /** Start tokens of the pages shown so far; the last is the current page's. */
  private starts: string[] = []
  private nextFrom: string | undefined
  private abort: AbortController | undefined
  private readonly log = byId<HTMLOListElement>('history-log')
  private readonly limit = byId<HTMLInputElement>('history-limit')
  private readonly prev = byId<HTMLButtonElement>('history-prev')
  private readonly next = byId<HTMLButtonElement>('history-next')
  private readonly page = byId('history-page')
  private readonly error = byId('history-error')

  constructor(
    private readonly token: () => string | undefined,
    private readonly pretty: () => boolean,
  ) {
    byId('history-first').addEventListener('click', () => this.load(['start']))
    this.next.addEventListener('click', () => this.nextFrom !== undefined && this.load([...this.starts, this.nextFrom]))
    this.prev.addEventListener('click', () => this.starts.length > 1 && this.load(this.starts.slice(0, -1)))
  }

  select(stream: string): void {
    if (stream === this.stream) return
    this.stream = stream
    this.log.replaceChildren()
    if (stream !== '') this.load(['start'])
  }

  private load(starts: string[]): void {
    this.abort?.abort()
    const abort = new AbortController()
    this.abort = abort
    const from = starts[starts.length - 1] as string
    const limit = Math.max(1, Math.min(1000, Number(this.limit.value) || 20))
    const client = connect(location.origin, { token: this.token() })
    this.prev.disabled = this.next.disabled = true
    this.page.dataset.state = 'loading'
    void (async () => {
      const got: BrowserMessage[] = []
      try {
        for await (const m of client.history(this.stream, { from, limit, signal: abort.signal })) got.push(m)
      } catch (e) {
        if (abort.signal.aborted) return
        showError(this.error, `History of ${this.stream} failed: ${(e as Error).message}`)
        this.page.dataset.state = 'error'
        return
      }
      if (abort.signal.aborted) return
      showError(this.error, undefined)
      this.starts = starts
      this.nextFrom = got.length === limit ? got[got.length - 1]?.resume : undefined
      this.log.replaceChildren(
        ...got.map((m) =>
          el(
            'li',
            { 'data-offset': m.offset },
            el('span', { class: 'offset' }, shownOffset(m.offset)),
            el('pre', {}, formatValue(m.value, this.pretty())),
          ),
        ),
      )
      const range =
        got.length === 0
          ? 'no messages'
          : `offsets ${shownOffset(got[0]!.offset)}–${shownOffset(got[got.length - 1]!.offset)}`
      this.page.textContent = `page ${starts.length}: ${range}`
      this.page.dataset.page = String(starts.length)
      this.page.dataset.state = 'ready'
      this.prev.disabled = starts.length <= 1
      this.next.disabled = this.nextFrom === undefined
    })()
  }
}
