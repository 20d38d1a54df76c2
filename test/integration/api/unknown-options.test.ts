// A misspelt option must not be ignored: createTopic('x', { partition: 3 }) used to make one
// partition. Every options object of the public API refuses keys it does not know, naming them.
import { afterEach, beforeEach, expect, it } from 'vitest'
import { InvalidArgumentError, open, type Twain } from '../../../src/index.js'
import { tempDir } from '../../helpers/tmp.js'

let tmp: ReturnType<typeof tempDir>
let twain: Twain
beforeEach(async () => {
  tmp = tempDir()
  twain = await open(tmp.dir)
  await twain.createTopic('t')
})
afterEach(async () => {
  await twain.close()
  tmp.remove()
})

const refuses = (fn: () => unknown, key: string) => {
  expect(fn).toThrow(InvalidArgumentError)
  expect(fn).toThrow(new RegExp(`Unknown .*"${key}"`))
}

it('createTopic, producer, tail, history and consumer refuse unknown option keys, naming them', async () => {
  await expect(twain.createTopic('x', { partition: 3 } as never)).rejects.toThrow(
    /Unknown createTopic option "partition": use partitions/,
  )
  expect(await twain.topicExists('x')).toBe(false)
  refuses(() => twain.producer('t', { linger: 5 } as never), 'linger')
  refuses(() => twain.tail('t', { form: 'start' } as never), 'form')
  refuses(() => twain.history('t', { limt: 3 } as never), 'limt')
  refuses(() => twain.consumer('t', { group: 'g', maxInflight: 10 } as never), 'maxInflight')
})

it('open() refuses unknown option keys', async () => {
  await expect(open(tmp.dir, { fsnc: 'batch' } as never)).rejects.toThrow(/Unknown open\(\) option "fsnc"/)
})
