// Typed errors carry their values as fields (not only in their text), and every Standard Schema
// validator works with registerType: zod, valibot and arktype (an arktype type is a function AND a
// Standard Schema; it must be validated as the schema).
import { describe, expect, it } from 'vitest'
import { type } from 'arktype'
import * as v from 'valibot'
import { z } from 'zod'
import { GroupNotFoundError, InvalidKeyError, MessageTooLargeError, ValidationError } from '../../../src/index.js'
import { useFileStore } from '../../helpers/file-store.js'

const store = useFileStore()

const schemas = {
  zod: z.object({ id: z.number().int(), customer: z.object({ name: z.string() }) }),
  valibot: v.object({ id: v.pipe(v.number(), v.integer()), customer: v.object({ name: v.string() }) }),
  arktype: type({ id: 'number.integer', customer: { name: 'string' } }),
}

describe('registerType with real Standard Schema validators', () => {
  for (const [vendor, schema] of Object.entries(schemas)) {
    it(`${vendor}: a valid value is sent and read back typed; an invalid one is refused with ValidationError.issues and paths`, async () => {
      await store.twain.createTopic('orders', { messageTypes: ['Order'] })
      store.twain.registerType('Order', schema)
      const p = store.twain.producer('orders')
      await p.send(1, { id: 7, customer: { name: 'ada' } }, { type: 'Order' })
      const err = await p.send(1, { id: 7, customer: { name: 42 } }, { type: 'Order' }).catch((e: unknown) => e)
      expect(err).toBeInstanceOf(ValidationError)
      const issues = (err as ValidationError).issues
      expect(issues.length).toBeGreaterThan(0)
      // Array.from: arktype's path is an array subclass with extra properties.
      const path = Array.from(issues[0]?.path ?? [], (s) => (typeof s === 'object' && s !== null ? s.key : s))
      expect(path).toEqual(['customer', 'name'])
      expect((err as Error).message).toContain('customer.name')
      expect((err as Error).message).not.toContain('[object Object]')
      // The path once: arktype's own message starts with it ("customer.name must be a string").
      expect((err as Error).message.match(/customer\.name/g), (err as Error).message).toHaveLength(1)
      const got = []
      for await (const m of store.twain.history('orders')) got.push([m.type, m.value])
      expect(got).toEqual([['Order', { id: 7, customer: { name: 'ada' } }]])
    })
  }
})

describe('error fields', () => {
  it('InvalidKeyError.key is the refused key', async () => {
    await store.twain.createTopic('k', { keyType: 'u8' })
    const err = await store.twain
      .producer('k')
      .send(300, 'x')
      .catch((e: unknown) => e)
    expect(err).toBeInstanceOf(InvalidKeyError)
    expect((err as InvalidKeyError).key).toBe(300)
  })

  it('MessageTooLargeError.size and .limit are the sizes', async () => {
    await store.twain.createTopic('big', { keyType: 'u8', maxMessageBytes: 100 })
    const err = await store.twain
      .producer('big')
      .send(1, 'x'.repeat(200))
      .catch((e: unknown) => e)
    expect(err).toBeInstanceOf(MessageTooLargeError)
    expect(err).toMatchObject({ size: 201, limit: 100, code: 'ERR_MESSAGE_TOO_LARGE' })
  })

  it('GroupNotFoundError for admin calls on a group that does not exist', async () => {
    await store.twain.createTopic('t')
    for (const call of [() => store.twain.describeGroup('nope'), () => store.twain.deleteGroup('nope')]) {
      const err = await call().catch((e: unknown) => e)
      expect(err).toBeInstanceOf(GroupNotFoundError)
      expect(err).toMatchObject({ code: 'ERR_GROUP_NOT_FOUND', message: expect.stringContaining('"nope"') })
    }
  })
})
