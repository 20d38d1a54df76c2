// The twainmq dashboard: topics, groups and a live lag chart from the gateway's live overview
// (GET /v1/live), a live tail and history pages through the browser client. No polling: the
// gateway pushes a snapshot when something changed.
import './style.css'
import { byId, showError, syncOptions } from './dom.js'
import { renderGroups } from './groups.js'
import { HistoryPanel } from './history.js'
import { LagChart } from './lag-chart.js'
import { followOverview, type Snapshot } from './overview.js'
import { TailPanel } from './tail.js'
import { renderTopics } from './topics.js'

const TOKEN_KEY = 'twainmq.dashboard.token'
const status = byId('status')
const banner = byId('error')
const tokenInput = byId<HTMLInputElement>('token')

/** The bearer token: from `#token=…` (then removed from the address bar), else the one entered this session. */
function initialToken(): string | undefined {
  const m = /(?:^#|&)token=([^&]+)/.exec(location.hash)
  if (m) {
    sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(m[1] as string))
    history.replaceState(null, '', location.pathname + location.search)
  }
  return sessionStorage.getItem(TOKEN_KEY) ?? undefined
}

let token = initialToken()
const chart = new LagChart()
const tail = new TailPanel(() => token)
const pages = new HistoryPanel(
  () => token,
  () => byId<HTMLInputElement>('tail-pretty').checked,
)
const tailSelect = byId<HTMLSelectElement>('tail-stream')
const historySelect = byId<HTMLSelectElement>('history-stream')
tailSelect.addEventListener('change', () => tail.select(tailSelect.value))
historySelect.addEventListener('change', () => pages.select(historySelect.value))

function setStatus(state: string, text: string): void {
  status.dataset.state = state
  status.textContent = text
}

function onSnapshot(s: Snapshot): void {
  setStatus('live', `live · ${new Date(s.at).toLocaleTimeString()}`)
  showError(banner, undefined)
  renderTopics(s.topics)
  renderGroups(s.groups)
  chart.add(s)
  const streams = s.topics.flatMap((t) => t.partitions.map((p) => p.stream))
  if (syncOptions(tailSelect, streams)) tail.select(tailSelect.value)
  if (syncOptions(historySelect, streams)) pages.select(historySelect.value)
}

let following: AbortController | undefined
function follow(): void {
  following?.abort()
  const abort = new AbortController()
  following = abort
  setStatus('connecting', 'connecting…')
  void followOverview(
    token,
    {
      snapshot: onSnapshot,
      connected: () => showError(banner, undefined),
      error: (message, fatal) => {
        showError(banner, message)
        setStatus(fatal ? 'refused' : 'reconnecting', fatal ? 'not allowed' : 'reconnecting…')
      },
    },
    abort.signal,
  )
}

byId<HTMLFormElement>('token-form').addEventListener('submit', (e) => {
  e.preventDefault()
  token = tokenInput.value.trim() || undefined
  if (token) sessionStorage.setItem(TOKEN_KEY, token)
  else sessionStorage.removeItem(TOKEN_KEY)
  tokenInput.value = ''
  tail.select('')
  pages.select('')
  tailSelect.replaceChildren()
  historySelect.replaceChildren()
  follow()
})

follow()
