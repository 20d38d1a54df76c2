// Child: node --import tsx exit-check.ts <target> <prefix> <mode>
// Uses a tail or a consumer on either backend, ends it in the given way and must then exit by itself
// (no process.exit). Prints what it saw, then 'done'.
import { from, take } from 'rxjs'
import { AbortError, open } from '../../../src/index.js'
import { sleep } from '../wait.js'

const [target, prefix, mode] = process.argv.slice(2) as [string, string, string]
const twain = await open(target, prefix ? { prefix } : { pollMs: 50 }) // a prefix is for Redis, pollMs for a directory
await twain.createTopic('t', { partitions: 2 }).catch(() => undefined)
const producer = twain.producer<string>('t')
const opts = { group: 'g', sessionTimeoutMs: 2000, heartbeatIntervalMs: 100, commitIntervalMs: 100 }

switch (mode) {
  case 'tail-break': {
    setTimeout(() => void producer.send(1, 'x'), 100)
    for await (const m of twain.tail<string>('t')) {
      console.log('got', m.value)
      break
    }
    await twain.close()
    break
  }
  case 'tail-abort': {
    const ctrl = new AbortController()
    setTimeout(() => ctrl.abort(), 150)
    try {
      for await (const _ of twain.tail('t', { signal: ctrl.signal })) console.log('unexpected')
    } catch (e) {
      console.log(e instanceof AbortError ? 'aborted' : `wrong error ${String(e)}`)
    }
    await twain.close()
    break
  }
  case 'tail-unsubscribe': {
    setTimeout(() => void producer.send(1, 'y'), 100)
    await new Promise<void>((resolve) =>
      from(twain.tail<string>('t'))
        .pipe(take(1))
        .subscribe({ next: (m) => console.log('got', m.value), complete: resolve }),
    )
    await twain.close()
    break
  }
  case 'tail-close-while-waiting': {
    const done = (async () => {
      for await (const _ of twain.tail('t')) console.log('unexpected')
      console.log('ended')
    })()
    await sleep(150)
    await twain.close()
    await done
    break
  }
  case 'tail-break-no-close': {
    setTimeout(() => void producer.send(1, 'z'), 100)
    for await (const m of twain.tail<string>('t')) {
      console.log('got', m.value)
      break
    }
    break
  }
  case 'group-iterate-close': {
    await producer.send(1, 'x')
    const c = twain.consumer<string>('t', opts)
    for await (const m of c) {
      console.log('got', m.value)
      m.ack()
      break
    }
    await c.close()
    await twain.close()
    break
  }
  case 'group-never-iterated': {
    // created, never iterated, never closed; twain never closed either
    const c = twain.consumer<string>('t', opts)
    while (c.assignments().length < 2) await sleep(20)
    console.log('assigned')
    break
  }
  case 'group-break-no-close': {
    await producer.send(1, 'x')
    const c = twain.consumer<string>('t', opts)
    for await (const m of c) {
      console.log('got', m.value)
      m.ack()
      break
    }
    break
  }
  case 'group-twain-close-while-iterating': {
    await producer.send(1, 'x')
    const c = twain.consumer<string>('t', opts)
    let gotOne: () => void = () => undefined
    const got = new Promise<void>((resolve) => (gotOne = resolve))
    const done = (async () => {
      for await (const m of c) {
        console.log('got', m.value)
        m.ack()
        gotOne()
      }
      console.log('ended')
    })()
    // Closed while the loop waits for a next message (after the first: a loaded machine joins slowly).
    await got
    await twain.close()
    await done
    break
  }
  default:
    throw new Error(`unknown mode ${mode}`)
}
console.log('done')
