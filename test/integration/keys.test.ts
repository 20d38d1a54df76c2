import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { InvalidKeyError, InvalidKeyTypeError, open, type KeyType, type Twain } from '../../src/index.js'
import { collect, makeTmp, rmTmp } from '../unit/helpers.js'
import { VALID } from '../helpers/key-cases.js'

describe('keys through a real topic', () => {
  let dir: string
  let twain: Twain
  beforeEach(async () => {
    dir = makeTmp()
    twain = await open(dir)
  })
  afterEach(async () => {
    await twain.close()
    rmTmp(dir)
  })

  it('delivers every valid key of every key type unchanged (u64 as bigint) in history', async () => {
    for (const [type, keys] of VALID) {
      const topic = `keys-${type}`
      await twain.createTopic(topic, { keyType: type })
      const p = twain.producer(topic)
      await p.sendBatch(keys.map((key, i) => ({ key, value: i })))
      const got = await collect(twain.history(topic))
      expect(got.map((m) => m.key)).toEqual(keys)
      if (type === 'u64') for (const m of got) expect(typeof m.key).toBe('bigint')
    }
  })

  it('rejects a bad key at send with InvalidKeyError and writes nothing', async () => {
    await twain.createTopic('k8', { keyType: 'u8' })
    const p = twain.producer('k8')
    await expect(p.send(300, 'v')).rejects.toThrow(InvalidKeyError)
    await expect(p.send(-1, 'v')).rejects.toThrow(/-1/)
    expect(await twain.length('k8')).toBe(0)
    expect(await p.send(255, 'ok')).toEqual({ partition: 0, offset: 0 })
  })

  it('rejects createTopic with a bad key type with InvalidKeyTypeError naming it, creating nothing', async () => {
    await expect(twain.createTopic('bad', { keyType: 'u12' as KeyType })).rejects.toThrow(InvalidKeyTypeError)
    await expect(twain.createTopic('bad', { keyType: 'char0' as KeyType })).rejects.toThrow(/char0/)
    await expect(twain.createTopic('bad', { keyType: 'float' as KeyType })).rejects.toThrow(/float/)
    expect(await twain.topicExists('bad')).toBe(false)
  })

  it('defaults the key type to u16', async () => {
    const info = await twain.createTopic('dflt')
    expect(info.keyType).toBe('u16')
    await expect(twain.producer('dflt').send(65536, 'x')).rejects.toThrow(InvalidKeyError)
  })
})
