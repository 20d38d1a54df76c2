// The dashboard's one import of the browser client (twainmq/browser): the live tail and the
// history pages read through it, so the dashboard is its first user.
export { connect } from '../../src/browser/index.js'
export type { BrowserMessage } from '../../src/browser/index.js'
