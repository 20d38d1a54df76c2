// The rejection of an open() that must fail with a ConnectionError (the connect-error tests).
import { expect } from 'vitest'
import { ConnectionError, open } from '../../src/index.js'

/** The `ConnectionError` `open(url)` rejects with; fails the test if it opens or rejects otherwise. */
export async function openFailure(url: string): Promise<ConnectionError> {
  const e = await open(url, { prefix: 'x:' }).then(
    async (t) => {
      await t.close()
      throw new Error(`open(${url}) succeeded`)
    },
    (x: unknown) => x,
  )
  expect(e).toBeInstanceOf(ConnectionError)
  return e as ConnectionError
}
