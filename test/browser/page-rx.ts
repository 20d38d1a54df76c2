// RxJS for the test pages (bundled separately from twainmq/browser, which must not contain it).
export { bufferTime, filter, from, lastValueFrom, map, scan, take, toArray } from 'rxjs'
