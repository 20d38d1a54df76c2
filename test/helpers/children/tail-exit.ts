// Child: node --import tsx tail-exit.ts <dir> <mode>
// Tails a topic, ends the tail in the given way while it is waiting, closes twain and must then exit by itself.
import { from, take } from 'rxjs'
import { AbortError, open } from '../../../src/index.js'
import { sleep } from '../wait.js'

const [dir, mode] = process.argv.slice(2) as [string, string]
const twain = await open(dir)
await twain.createTopic('t', { partitions: 2 }).catch(() => undefined)
const producer = twain.producer<string>('t')
if (mode === 'break') {
  setTimeout(() => void producer.send(1, 'x'), 50)
  for await (const m of twain.tail('t')) {
    console.log('got', m.value)
    break
  }
} else if (mode === 'abort') {
  const ctrl = new AbortController()
  setTimeout(() => ctrl.abort(), 100)
  try {
    for await (const _ of twain.tail('t', { signal: ctrl.signal })) console.log('unexpected')
  } catch (e) {
    console.log(e instanceof AbortError ? 'aborted' : `wrong error ${String(e)}`)
  }
} else if (mode === 'unsubscribe') {
  setTimeout(() => void producer.send(1, 'y'), 50)
  await new Promise<void>((resolve) =>
    from(twain.tail('t'))
      .pipe(take(1))
      .subscribe({ next: (m) => console.log('got', m.value), complete: resolve }),
  )
} else if (mode === 'close-while-waiting') {
  // No explicit end of the iteration: twain.close() must end it.
  const done = (async () => {
    for await (const _ of twain.tail('t')) console.log('unexpected')
    console.log('ended')
  })()
  await sleep(100)
  await twain.close()
  await done
}
await twain.close()
console.log('closed')
