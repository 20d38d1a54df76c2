// A background failure of a consumer (here: a dead-letter write that fails) must not vanish when the
// application has no 'error' listener: the first one of each code is printed as a process warning
// (`TwainmqWarning`); with a listener, the listener gets it and nothing is printed.
import { afterEach, beforeEach, expect, it } from 'vitest'
import { open, type Twain } from '../../../src/index.js'
import { until } from '../../helpers/spawn.js'
import { tempDir } from '../../helpers/tmp.js'

let tmp: ReturnType<typeof tempDir>
let twain: Twain
const warnings: Error[] = []
const onWarning = (w: Error) => {
  if (w.name === 'TwainmqWarning') warnings.push(w)
}
beforeEach(async () => {
  tmp = tempDir()
  twain = await open(tmp.dir)
  // The dead-letter topic takes u8 keys: a string-keyed message cannot be written there.
  await twain.createTopic('src', { keyType: 'string' })
  await twain.createTopic('dlq', { keyType: 'u8' })
  await twain.producer<string>('src').sendBatch([
    { key: 'a', value: 'poison' },
    { key: 'b', value: 'poison' },
  ])
  warnings.length = 0
  process.on('warning', onWarning)
})
afterEach(async () => {
  process.off('warning', onWarning)
  await twain.close()
  tmp.remove()
})

async function termAll(listen: ((e: Error) => void) | undefined): Promise<void> {
  const c = twain.consumer<string>('src', { group: 'g', deadLetter: 'dlq', drainTimeoutMs: 500 })
  if (listen) c.on('error', listen)
  let n = 0
  for await (const m of c) {
    m.term('poison')
    if (++n === 2) break
  }
  await c.close()
}

it('without an error listener, a failed dead-letter write is printed once as a TwainmqWarning naming the code', async () => {
  await termAll(undefined)
  await until(() => warnings.length > 0, 5_000, 'a TwainmqWarning')
  expect(warnings).toHaveLength(1) // two failures of one code: printed once
  expect(warnings[0]?.message).toMatch(/group "g": ERR_DEAD_LETTER: .*invalid for key type u8/)
})

it('with an error listener, the listener gets the failures and nothing is printed', async () => {
  const errors: Error[] = []
  await termAll((e) => errors.push(e))
  await until(() => errors.length > 0, 5_000, 'an error event')
  expect(errors[0]).toMatchObject({ code: 'ERR_DEAD_LETTER', cause: { code: 'ERR_INVALID_KEY' } })
  expect(warnings).toHaveLength(0)
})
