import { inflateRawSync } from 'node:zlib'
import { b85decode } from '../../../src/compat/twainmq/base85.js'
import { appendFileSync, existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import {
  InvalidArgumentError,
  InvalidKeyTypeError,
  TopicCorruptError,
  TopicExistsError,
  TopicNotFoundError,
  UnknownMessageTypeError,
  open,
  type Key,
  type KeyType,
  type Twain,
} from '../../../src/index.js'
import { stringifyJson } from '../../../src/compat/twainmq/json64.js'
import { collect, takeN } from '../../unit/helpers.js'
import { pythonAvailable, pythonDecode, runScript, tempRoot } from '../../helpers/twainmq.js'
import { sleep } from '../../helpers/wait.js'

const chunks = (dir: string, topic: string) =>
  readdirSync(join(dir, topic))
    .filter((n) => n.endsWith('.tmf'))
    .sort()

describe('writing TwainMQ topics (format twainmq-v1)', () => {
  let root: ReturnType<typeof tempRoot>
  let twain: Twain
  beforeEach(async () => {
    root = tempRoot(false)
    twain = await open(root.dir, { format: 'twainmq-v1' })
  })
  afterEach(async () => {
    vi.useRealTimers()
    await twain.close()
    root.remove()
  })

  it('writes the documented golden line through the producer, into the UTC day chunk, and a Python-style config', async () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(1700000000000) // 2023-11-14T22:13:20Z
    await twain.createTopic('hello', { partitions: 1 })
    expect(await twain.producer('hello').send(42, 'hello world')).toEqual({ partition: 0, offset: 0 })
    expect(chunks(root.dir, 'hello')).toEqual(['0-20231114_0.tmf'])
    expect(readFileSync(join(root.dir, 'hello', '0-20231114_0.tmf'), 'latin1')).toBe('04eLD^LNKmY&$%Sg@1$yX@PFUm;)00\n')
    expect(readFileSync(join(root.dir, 'hello.twc'), 'utf8')).toBe(
      '{\n"key_width": 2,\n"partitions": 1,\n"message_types": {}\n}',
    )
    await twain.producer('hello').send(7, Buffer.from([0, 1, 0x72, 0x61, 0x77]))
    await twain.producer('hello').send(1, '')
    expect(readFileSync(join(root.dir, 'hello', '0-20231114_0.tmf'), 'latin1')).toBe(
      '04eLD^LNKmY&$%Sg@1$yX@PFUm;)00\n00#LD^LNKmY&$`@_IklvoY`\n009LD^LNKmY&$0{{\n',
    )
  })

  it('writes typed values as 0xFB + the topic type id + JSON, as Python does (group Commit golden line: same key, time and payload bytes)', async () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(1700000000000)
    const types = [
      '~~TWAIN~~JOINED',
      '~~TWAIN~~ABORTJOIN',
      '~~TWAIN~~REBALOFFER',
      '~~TWAIN~~REBALCONFIRM',
      '~~TWAIN~~BEGINREBAL',
      '~~TWAIN~~ENDREBAL',
      '~~TWAIN~~COMMIT',
    ]
    for (const t of types) twain.registerType(t)
    await twain.createTopic('--group--g', { keyType: 'u32', messageTypes: types })
    const p = twain.producer('--group--g')
    await p.send(
      0,
      {
        partition_offsets: [
          [0, 0],
          [1, 0],
        ],
      },
      { type: '~~TWAIN~~COMMIT' },
    )
    await p.send(1, {}, { type: '~~TWAIN~~ENDREBAL' })
    const written = readFileSync(join(root.dir, '--group--g', '0-20231114_0.tmf'), 'latin1').split('\n')
    const golden = ['00000LD^LNKmY&$`^~^styGX$RFYYenV%P*pO#jfT2icJ6&-D$V-TwoZ3rY|YXJ', '00001LD^LNKmY&$`^~^wT?+s']
    expect(written.pop()).toBe('') // every line ends with \n
    expect(written).toHaveLength(2)
    written.forEach((line, i) => {
      const want = golden[i] as string
      expect(line.slice(0, 15)).toBe(want.slice(0, 15)) // u32 key (5) + timestamp (10)
      // Node's zlib may choose other deflate codes than CPython's: compare what the payloads hold.
      expect(inflateRawSync(b85decode(line.slice(15))).toString('hex')).toBe(
        inflateRawSync(b85decode(want.slice(15))).toString('hex'),
      )
    })
  })

  it('round-trips every key width and value kind, read back by our reader and by the Python reader rules', async () => {
    const cases: Array<{ keyType: KeyType; keys: Key[] }> = [
      { keyType: 'u8', keys: [0, 1, 255] },
      { keyType: 'u16', keys: [0, 42, 65535] },
      { keyType: 'u32', keys: [0, 2 ** 31, 2 ** 32 - 1] },
      { keyType: 'u64', keys: [0n, 2n ** 53n + 1n, 2n ** 64n - 1n] },
      { keyType: 'char1', keys: ['', 'a'] },
      { keyType: 'char6', keys: ['', 'abc', 'é', 'abcdef'] },
      { keyType: 'char16', keys: ['user-1', '😀 smile'] },
    ]
    twain.registerType('Order')
    const values: Array<{ value: unknown; type?: string }> = [
      { value: 'text é ✓' },
      { value: '{"looks":"like json"}' },
      { value: '' },
      { value: Buffer.from([0xfb, 0, 1, 2, 255]) },
      { value: Buffer.alloc(0) },
      { value: { id: 7, s: 'ü\u2028', list: [1, 2.5, null, true] }, type: 'Order' },
    ]
    for (const c of cases) {
      const name = `t-${c.keyType}`
      await twain.createTopic(name, { keyType: c.keyType, partitions: 3, messageTypes: ['Order'] })
      const sent: Array<{ key: Key; value: unknown; type?: string; partition: number; offset: number; ts: number }> = []
      const p = twain.producer(name)
      for (const key of c.keys) {
        for (const v of values) {
          const before = Date.now()
          const r = await p.send(key, v.value, v.type ? { type: v.type } : undefined)
          sent.push({ key, ...v, ...r, ts: before })
        }
      }
      const ours = await collect(twain.history(name))
      expect(ours).toHaveLength(sent.length)
      for (const s of sent) {
        const m = ours.find((x) => x.partition === s.partition && x.offset === s.offset)!
        expect(m.key).toEqual(s.key)
        expect(m.value).toEqual(s.value)
        expect(m.type).toBe(s.type)
        expect(Number.isInteger(m.timestamp)).toBe(true) // Date.now() ms survive seconds-as-float64 exactly
        expect(m.timestamp).toBeGreaterThanOrEqual(s.ts)
      }
      if (!pythonAvailable()) continue
      const py = pythonDecode(root.dir, name)
      expect(py).toHaveLength(sent.length)
      for (const m of ours) {
        const d = py.find((x) => x.partition === m.partition && x.offset === m.offset)!
        expect(d.error).toBeUndefined()
        expect(d.key).toEqual(typeof m.key === 'bigint' ? String(m.key) : m.key)
        expect(d.us).toBe(m.timestamp * 1000)
        if (typeof m.value === 'string') expect(d).toMatchObject({ kind: 'text', text: m.value })
        else if (Buffer.isBuffer(m.value)) expect(d).toMatchObject({ kind: 'bytes', hex: m.value.toString('hex') })
        else
          expect(d).toMatchObject({
            kind: 'typed',
            type: 'Order',
            type_id: 0,
            json: stringifyJson(m.value),
            raw_json: stringifyJson(m.value),
          })
      }
    }
  })

  it('puts a key in the same partition as Python would (hash64), including charN keys hashed unpadded', async () => {
    await twain.createTopic('h', { keyType: 'char16', partitions: 16 })
    expect((await twain.producer('h').send('user-1', 'v')).partition).toBe(15)
    await twain.createTopic('h3', { keyType: 'u64', partitions: 3 })
    expect((await twain.producer('h3').send(2n ** 64n - 1n, 'v')).partition).toBe(2)
  })

  it('does not read an incomplete last line until its newline arrives', async () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(1700000000000)
    await twain.createTopic('partial')
    await twain.producer('partial').send(1, 'complete')
    const file = join(root.dir, 'partial', '0-20231114_0.tmf')
    const line = '04eLD^LNKmY&$%Sg@1$yX@PFUm;)00'
    appendFileSync(file, line.slice(0, 17))
    expect((await collect(twain.history('partial'))).map((m) => m.value)).toEqual(['complete'])
    expect((await twain.describeTopic('partial')).offsets[0]!.end).toBe(1)
    const tail = twain.tail('partial', { from: { offset: 1 } })
    const next = takeN(tail, 1, 5000)
    // Time is the subject: the tail gets a chance to poll the file while its last line is incomplete.
    await sleep(100)
    appendFileSync(file, line.slice(17))
    await sleep(100)
    appendFileSync(file, '\n')
    const [m] = await next
    expect(m).toMatchObject({ offset: 1, key: 42, value: 'hello world', timestamp: 1700000000000 })
  })

  it('ends a torn last line (a crashed writer) before appending, so it stays one corrupt line at its offset', async () => {
    await twain.createTopic('torn')
    const p = twain.producer('torn')
    await p.send(1, 'a')
    const [file] = chunks(root.dir, 'torn')
    appendFileSync(join(root.dir, 'torn', file!), '04eLD^LNK') // a writer died mid-line
    expect(await p.send(2, 'b')).toEqual({ partition: 0, offset: 2 })
    const got = await collect(twain.history('torn'))
    expect(got.map((m) => m.offset)).toEqual([0, 1, 2])
    expect(got[1]!.error).toBeInstanceOf(TopicCorruptError)
    expect(got[2]).toMatchObject({ key: 2, value: 'b' })
  })

  it('refuses what the TwainMQ line cannot hold: headers, untyped JSON values, types missing from the topic, unbounded string keys, retention', async () => {
    await twain.createTopic('strict', { messageTypes: ['A'] })
    await twain.createTopic('notypes')
    twain.registerType('A')
    twain.registerType('B')
    const p = twain.producer('strict')
    await expect(p.send(1, 'x', { headers: { h: 'v' } })).rejects.toThrow(/cannot store headers/)
    await expect(p.send(1, { a: 1 })).rejects.toThrow(InvalidArgumentError)
    await expect(p.send(1, { a: 1 }, { type: 'B' })).rejects.toThrow(UnknownMessageTypeError)
    await expect(twain.producer('notypes').send(1, { a: 1 }, { type: 'A' })).rejects.toThrow(/not in the message_types/)
    await expect(twain.createTopic('s', { keyType: 'string' })).rejects.toThrow(InvalidKeyTypeError)
    await expect(twain.createTopic('r', { retention: { maxMessages: 5 } })).rejects.toThrow(
      /Retention is not supported/,
    )
    await expect(twain.trim('strict', { maxMessages: 1 })).rejects.toThrow(/not supported/)
    expect((await p.send(1, 'still fine')).offset).toBe(0) // nothing was written by the refused sends
  })

  it('creates each name once (TopicExistsError for a TwainMQ or native topic of that name) and deletes dir and config', async () => {
    await twain.createTopic('once', { partitions: 2 })
    expect(chunks(root.dir, 'once')).toHaveLength(2) // today's empty chunks, as a Python producer makes
    await expect(twain.createTopic('once')).rejects.toThrow(TopicExistsError)
    const native = await open(root.dir)
    try {
      await expect(native.createTopic('once')).rejects.toThrow(TopicExistsError)
    } finally {
      await native.close()
    }
    await twain.deleteTopic('once')
    expect(existsSync(join(root.dir, 'once'))).toBe(false)
    expect(existsSync(join(root.dir, 'once.twc'))).toBe(false)
    expect(await twain.topicExists('once')).toBe(false)
    await expect(twain.producer('once').send(1, 'x')).rejects.toThrow(TopicNotFoundError)
  })

  it('holds native and TwainMQ topics in one root; listTopics shows both and each keeps its format', async () => {
    await twain.createTopic('py-side')
    writeFileSync(join(root.dir, 'marker'), '')
    const mixed = await open(root.dir) // auto-detected; new topics are native
    try {
      await mixed.createTopic('native-side', { keyType: 'string' })
      expect(await mixed.listTopics()).toEqual(['native-side', 'py-side'])
      expect(await twain.listTopics()).toEqual(['native-side', 'py-side'])
      await mixed.producer('native-side').send('k', 'n', { headers: { h: '1' } })
      await mixed.producer('py-side').send(3, 'p')
      expect(existsSync(join(root.dir, 'native-side', 'topic.json'))).toBe(true)
      expect(existsSync(join(root.dir, 'native-side.twc'))).toBe(false)
      expect((await collect(twain.history('native-side')))[0]).toMatchObject({
        key: 'k',
        value: 'n',
        headers: { h: '1' },
      })
      expect((await collect(twain.history('py-side')))[0]).toMatchObject({ key: 3, value: 'p' })
    } finally {
      await mixed.close()
    }
  })

  it('shares a topic with a Python producer: its lines and ours interleave with true offsets', async () => {
    if (!pythonAvailable()) {
      // Without python3, append the lines a Python producer would write with the same rules.
      await twain.createTopic('shared')
      expect((await twain.producer('shared').send(1, 'ts')).offset).toBe(0)
      return
    }
    await twain.createTopic('shared', { partitions: 2 })
    const p = twain.producer('shared')
    const order: Array<{ who: string; key: number; value: string; partition: number; offset?: number }> = []
    for (let i = 0; i < 12; i++) {
      if (i % 3 === 1) {
        const r = JSON.parse(
          runScript([
            'produce',
            root.dir,
            'shared',
            JSON.stringify({ int: String(i) }),
            JSON.stringify({ text: `py ${i}` }),
          ]),
        ) as { partition: number }
        order.push({ who: 'py', key: i, value: `py ${i}`, partition: r.partition })
      } else {
        const r = await p.send(i, `ts ${i}`)
        order.push({ who: 'ts', key: i, value: `ts ${i}`, partition: r.partition, offset: r.offset })
      }
    }
    const got = await collect(twain.history('shared'))
    for (const part of [0, 1]) {
      const mine = got.filter((m) => m.partition === part)
      const sent = order.filter((o) => o.partition === part)
      expect(mine.map((m) => m.value)).toEqual(sent.map((o) => o.value))
      expect(mine.map((m) => m.offset)).toEqual(sent.map((_, i) => i))
      sent.forEach((o, i) => o.offset !== undefined && expect(o.offset).toBe(i)) // offsets we returned are the line indexes
    }
    const py = pythonDecode(root.dir, 'shared')
    expect(py.map((d) => [d.partition, d.offset, d.text])).toEqual(got.map((m) => [m.partition, m.offset, m.value]))
  })

  it('gives dense, unique offsets to concurrent writers of several twain instances (cross-process lock)', async () => {
    await twain.createTopic('busy')
    const others = await Promise.all([1, 2, 3].map(() => open(root.dir, { format: 'twainmq-v1' })))
    try {
      const all = [twain, ...others]
      const results = await Promise.all(
        all.map(async (t, w) => {
          const p = t.producer('busy')
          const out: Array<{ offset: number; value: string }> = []
          for (let i = 0; i < 50; i++) {
            const batch = Array.from({ length: 1 + (i % 3) }, (_, j) => ({ key: w, value: `w${w}-${i}-${j}` }))
            const rs = await p.sendBatch(batch)
            rs.forEach((r, j) => out.push({ offset: r.offset, value: batch[j]!.value }))
          }
          return out
        }),
      )
      const flat = results.flat()
      const offsets = flat.map((r) => r.offset).sort((a, b) => a - b)
      expect(offsets).toEqual(offsets.map((_, i) => i))
      const got = await collect(twain.history('busy'))
      expect(got).toHaveLength(flat.length)
      for (const r of flat) expect(got[r.offset]!.value).toBe(r.value)
    } finally {
      await Promise.all(others.map((t) => t.close()))
    }
  })
})
