import { describe, expect, it } from 'vitest'
import { TopicCorruptError } from '../../src/index.js'
import {
  chunkFor,
  chunkName,
  compareChunks,
  parseChunkName,
  utcDay,
  type Chunk,
} from '../../src/compat/twainmq/chunks.js'
import { formatTwc, parseTwc } from '../../src/compat/twainmq/twc-config.js'
import { golden } from '../helpers/twainmq.js'

describe('TwainMQ topic config (<topic>.twc)', () => {
  it("writes exactly what Python's json.dump(config, f, indent=0) writes", () => {
    for (const t of golden().twc) {
      const text = formatTwc({
        keyWidth: t.key_width,
        partitions: t.partitions,
        messageTypes: new Map(t.message_types.map((n, i) => [n, i])),
      })
      expect(text).toBe(t.text)
    }
    expect(formatTwc({ keyWidth: 2, partitions: 4, messageTypes: new Map([['Order', 0]]) })).toBe(
      '{\n"key_width": 2,\n"partitions": 4,\n"message_types": {\n"Order": 0\n}\n}',
    )
  })

  it('reads any JSON formatting, partitions through int() and the type map', () => {
    const c = parseTwc('{"partitions": "3", "message_types": {"A": 2, "B": 0}, "key_width": -16}', 'x.twc')
    expect(c).toEqual({
      keyWidth: -16,
      partitions: 3,
      messageTypes: new Map([
        ['A', 2],
        ['B', 0],
      ]),
      maxMessageBytes: undefined,
    })
    expect(parseTwc('{"key_width":8,"partitions":2.0,"message_types":{}}', 'x').partitions).toBe(2)
  })

  it('round-trips the optional max_message_bytes (ignored by Python)', () => {
    const text = formatTwc({ keyWidth: 1, partitions: 1, messageTypes: new Map(), maxMessageBytes: 2048 })
    expect(text).toBe('{\n"key_width": 1,\n"partitions": 1,\n"message_types": {},\n"max_message_bytes": 2048\n}')
    expect(parseTwc(text, 'x').maxMessageBytes).toBe(2048)
  })

  it('reports a broken config as TopicCorruptError naming the file and the field', () => {
    expect(() => parseTwc('{', 'a.twc')).toThrow(TopicCorruptError)
    expect(() => parseTwc('{', 'a.twc')).toThrow(/a\.twc/)
    expect(() => parseTwc('{"key_width":3,"partitions":1}', 'a')).toThrow(/key_width 3/)
    expect(() => parseTwc('{"key_width":2,"partitions":0}', 'a')).toThrow(/partitions 0/)
    expect(() => parseTwc('{"key_width":2,"partitions":1,"message_types":{"A":70000}}', 'a')).toThrow(/not a u16/)
  })
})

describe('TwainMQ chunk files (<P>-<YYYYMMDD>_<start>.tmf)', () => {
  it('parses chunk names the way Python writes them, and nothing else', () => {
    expect(parseChunkName('3-20240102_17.tmf')).toEqual({
      partition: 3,
      day: '20240102',
      start: 17,
      name: '3-20240102_17.tmf',
    })
    for (const bad of [
      '03-20240102_17.tmf',
      '3-2024012_17.tmf',
      '3-20240102_17.txt',
      '3-20240102.tmf',
      '.0.lock',
      '0.lock',
      'x-20240102_1.tmf',
    ]) {
      expect(parseChunkName(bad), bad).toBeUndefined()
    }
    expect(chunkName(0, '20240103', 5)).toBe('0-20240103_5.tmf')
  })

  it('orders chunks by start offset, then day: an empty day chunk comes before the next that shares its start', () => {
    const c = (name: string) => parseChunkName(name) as Chunk
    const sorted = [c('0-20240104_11.tmf'), c('0-20240103_9.tmf'), c('0-20240102_9.tmf'), c('0-20240101_0.tmf')].sort(
      compareChunks,
    )
    expect(sorted.map((x) => x.name)).toEqual([
      '0-20240101_0.tmf',
      '0-20240102_9.tmf',
      '0-20240103_9.tmf',
      '0-20240104_11.tmf',
    ])
    expect(chunkFor(sorted, 0)).toBe(0)
    expect(chunkFor(sorted, 8)).toBe(0)
    expect(chunkFor(sorted, 9)).toBe(2) // the last chunk starting at or before 9
    expect(chunkFor(sorted, 10)).toBe(2)
    expect(chunkFor(sorted, 1000)).toBe(3)
  })

  it('names days in UTC, rolling over at UTC midnight whatever the local time zone', () => {
    expect(utcDay(Date.UTC(2024, 0, 1, 23, 59, 59, 999))).toBe('20240101')
    expect(utcDay(Date.UTC(2024, 0, 2, 0, 0, 0, 0))).toBe('20240102')
    expect(utcDay(Date.UTC(2024, 11, 31, 23, 59, 59, 999))).toBe('20241231')
    expect(utcDay(Date.UTC(2025, 0, 1))).toBe('20250101')
    expect(utcDay(0)).toBe('19700101')
  })
})
