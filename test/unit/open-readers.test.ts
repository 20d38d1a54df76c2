/**
 * A store's open readers (`OpenReaders`): a reader leaves the set through the `onClose` hook its
 * first `close()` calls, so closing the store closes only the readers still open; both file-backend
 * readers call the hook once however often they are closed.
 */
import { afterAll, describe, expect, it } from 'vitest'
import type { PartitionReader } from '../../src/backends/backend.js'
import { FilePartitionReader } from '../../src/backends/file/reader.js'
import { OpenReaders } from '../../src/backends/open-readers.js'
import { ChunkDirectory } from '../../src/compat/twainmq/chunks.js'
import { LineIndexCache } from '../../src/compat/twainmq/line-index.js'
import { lineFormat } from '../../src/compat/twainmq/line-codec.js'
import { TwainmqPartitionReader } from '../../src/compat/twainmq/reader.js'
import { keyCodec } from '../../src/core/keys.js'
import { tempDir } from '../helpers/tmp.js'

const t = tempDir('twainmq-open-readers-')
afterAll(() => t.remove())

/** A reader that counts its `close()` calls and calls its hook at the first, as the real ones do. */
class CountingReader implements PartitionReader {
  readonly topic = 't'
  readonly partition = 0
  readonly next = 0
  closes = 0
  constructor(private readonly onClose: () => void) {}
  read = () => Promise.resolve([])
  readRaw = () => Promise.resolve([])
  verifyEnd = () => Promise.resolve()
  takeRollback = () => undefined
  seek(): void {}
  close(): Promise<void> {
    if (this.closes++ === 0) this.onClose()
    return Promise.resolve()
  }
}

describe('OpenReaders', () => {
  it('closes at closeAll only the readers not closed before, once each', async () => {
    const readers = new OpenReaders()
    const [a, b, c] = [0, 1, 2].map(() => readers.add((onClose) => new CountingReader(onClose))) as [
      CountingReader,
      CountingReader,
      CountingReader,
    ]
    await b.close()
    await readers.closeAll()
    await readers.closeAll()
    expect([a.closes, b.closes, c.closes]).toEqual([1, 1, 1])
  })

  it.each([
    [
      'file',
      (onClose: () => void) =>
        new FilePartitionReader(t.dir, 't', 0, keyCodec('u32'), 0, undefined, undefined, onClose),
    ],
    [
      'twainmq-v1',
      (onClose: () => void) =>
        new TwainmqPartitionReader(
          new ChunkDirectory(t.dir, 't'),
          new LineIndexCache(),
          't',
          0,
          lineFormat(4),
          0,
          undefined,
          onClose,
        ),
    ],
  ])('the %s reader calls its onClose at its first close only', async (_, make) => {
    let calls = 0
    const r = make(() => calls++)
    await r.close()
    await r.close()
    expect(calls).toBe(1)
  })
})
