import { describe, expect, it } from 'vitest'
import { InvalidKeyError, InvalidKeyTypeError, type KeyType } from '../../../src/index.js'
import { collect } from '../../unit/helpers.js'
import { VALID } from '../../helpers/key-cases.js'
import { useFileStore } from '../../helpers/file-store.js'

describe('keys through a real topic', () => {
  const store = useFileStore()

  it('delivers every valid key of every key type unchanged (u64 as bigint) in history', async () => {
    for (const [type, keys] of VALID) {
      const topic = `keys-${type}`
      await store.twain.createTopic(topic, { keyType: type })
      const p = store.twain.producer(topic)
      await p.sendBatch(keys.map((key, i) => ({ key, value: i })))
      const got = await collect(store.twain.history(topic))
      expect(got.map((m) => m.key)).toEqual(keys)
      if (type === 'u64') for (const m of got) expect(typeof m.key).toBe('bigint')
    }
  })

  it('rejects a bad key at send with InvalidKeyError and writes nothing', async () => {
    await store.twain.createTopic('k8', { keyType: 'u8' })
    const p = store.twain.producer('k8')
    await expect(p.send(300, 'v')).rejects.toThrow(InvalidKeyError)
    await expect(p.send(-1, 'v')).rejects.toThrow(/-1/)
    expect(await store.twain.length('k8')).toBe(0)
    expect(await p.send(255, 'ok')).toEqual({ partition: 0, offset: 0 })
  })

  it('rejects createTopic with a bad key type with InvalidKeyTypeError naming it, creating nothing', async () => {
    await expect(store.twain.createTopic('bad', { keyType: 'u12' as KeyType })).rejects.toThrow(InvalidKeyTypeError)
    await expect(store.twain.createTopic('bad', { keyType: 'char0' as KeyType })).rejects.toThrow(/char0/)
    await expect(store.twain.createTopic('bad', { keyType: 'float' as KeyType })).rejects.toThrow(/float/)
    expect(await store.twain.topicExists('bad')).toBe(false)
  })

  it('defaults the key type to u16', async () => {
    const info = await store.twain.createTopic('dflt')
    expect(info.keyType).toBe('u16')
    await expect(store.twain.producer('dflt').send(65536, 'x')).rejects.toThrow(InvalidKeyError)
  })
})
