// What a page needs to tail a stream as an RxJS Observable without twainmq/browser: the protocol's
// client and RxJS's Observable (the browser bench bundles this to compare sizes).
export { stream } from '@durable-streams/client'
export { Observable, from } from 'rxjs'
