// The live tail panel: follows one stream from its end with the browser client. Pause ends the
// read (and its HTTP request) and keeps the last message's resume token; Resume reads on from it,
// so nothing written meanwhile is missed or shown twice.
import { connect, type BrowserMessage } from './client.js'
import { byId, el, formatValue, showError, shownOffset } from './dom.js'

const SHOWN = 200

export class TailPanel {
  private abort: AbortController | undefined
  private resumeFrom: string | undefined
  private stream = ''
  private readonly shown: BrowserMessage[] = []
  private readonly log = byId<HTMLOListElement>('tail-log')
  private readonly pause = byId<HTMLButtonElement>('tail-pause')
  private readonly pretty = byId<HTMLInputElement>('tail-pretty')
  private readonly state = byId('tail-state')
  private readonly error = byId('tail-error')

  constructor(private readonly token: () => string | undefined) {
    this.pause.addEventListener('click', () =>
      this.abort ? this.stop('paused') : this.start(this.resumeFrom ?? 'now'),
    )
    this.pretty.addEventListener('change', () =>
      this.log.replaceChildren(...[...this.shown].reverse().map((m) => this.item(m))),
    )
  }

  /** Tail `stream` (from its end), or nothing with ''. */
  select(stream: string): void {
    if (stream === this.stream) return
    this.stop('')
    this.stream = stream
    this.resumeFrom = undefined
    this.shown.length = 0
    this.log.replaceChildren()
    this.pause.disabled = stream === ''
    if (stream !== '') this.start('now')
  }

  private stop(state: string): void {
    this.abort?.abort()
    this.abort = undefined
    this.pause.textContent = 'Resume'
    this.state.textContent = state
    this.state.dataset.state = state
  }

  private start(from: string): void {
    const abort = new AbortController()
    this.abort = abort
    this.pause.textContent = 'Pause'
    this.state.textContent = 'live'
    this.state.dataset.state = 'live'
    showError(this.error, undefined)
    const client = connect(location.origin, { token: this.token() })
    void (async () => {
      try {
        for await (const m of client.tail(this.stream, { from, signal: abort.signal })) {
          this.resumeFrom = m.resume
          this.shown.push(m)
          this.log.prepend(this.item(m))
          if (this.shown.length > SHOWN) {
            this.shown.shift()
            this.log.lastElementChild?.remove()
          }
        }
      } catch (e) {
        if (abort.signal.aborted) return
        showError(this.error, `Tail of ${this.stream} failed: ${(e as Error).message}`)
        this.stop('stopped')
      }
    })()
  }

  private item(m: BrowserMessage): HTMLLIElement {
    return el(
      'li',
      { 'data-offset': m.offset },
      el('span', { class: 'offset' }, shownOffset(m.offset)),
      el('pre', {}, formatValue(m.value, this.pretty.checked)),
    )
  }
}
