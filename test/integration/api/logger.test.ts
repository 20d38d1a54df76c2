// open(…, { logger }): a member's partitions assigned and revoked (info), commits (debug) and a stall
// (warn) reach the logger with structured fields, on a directory and on Redis; a logger that throws
// breaks nothing; a logger without the four methods is refused by name.
import { describe, expect, it } from 'vitest'
import { InvalidArgumentError, open, type Logger } from '../../../src/index.js'
import { backends } from '../../conformance/backends.js'
import { until } from '../../helpers/wait.js'
import { FAST, openOther, twain, useGroupStore } from '../groups/groups-fixtures.js'

interface Line {
  level: string
  fields: Record<string, unknown>
  message: string
}

function collecting(): { logger: Logger; lines: Line[] } {
  const lines: Line[] = []
  const at =
    (level: string) =>
    (fields: Record<string, unknown>, message: string): void => {
      lines.push({ level, fields, message })
      if (fields.event === 'commit') throw new Error('a logger that throws') // must not break the member
    }
  return { logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }, lines }
}

const kinds = backends().filter((k) => k.name === 'file' || k.name === 'redis')

describe.each(kinds)('logger on $name', (kind) => {
  useGroupStore(kind)

  it('tells a member’s assignments, commits, stall and leaving', async () => {
    await twain.createTopic('orders', { partitions: 2 })
    await twain.producer<string>('orders').sendBatch([
      { key: 1, value: 'a', partition: 0 },
      { key: 2, value: 'b', partition: 0 },
      { key: 3, value: 'c', partition: 1 },
    ])
    const { logger, lines } = collecting()
    const logged = await openOther({ logger })
    const c = logged.consumer<string>('orders', { group: 'g', ...FAST, maxInFlight: 2, stallWarningMs: 300 })
    const it = c[Symbol.asyncIterator]()
    const first = (await it.next()).value
    first.ack()
    await c.commit()
    await it.next()
    await it.next()
    const pending = it.next() // waits, holding maxInFlight unsettled: a stall
    await until(() => lines.some((l) => l.fields.event === 'stalled'), 10_000, 'the stall logged')
    await c.close()
    await pending.catch(() => undefined)
    await logged.close()
    const assigned = lines.find((l) => l.fields.event === 'assigned')
    expect(assigned).toMatchObject({ level: 'info', fields: { group: 'g', kind: 'consumer' } })
    expect(assigned?.fields.partitions).toEqual(expect.arrayContaining(['orders/0', 'orders/1']))
    expect(lines.find((l) => l.fields.event === 'commit')).toMatchObject({ level: 'debug' })
    expect(lines.find((l) => l.fields.event === 'stalled')).toMatchObject({
      level: 'warn',
      fields: { held: 2, maxInFlight: 2 },
    })
    expect(lines.find((l) => l.fields.event === 'revoked')).toMatchObject({ level: 'info' })
  })
})

describe('logger option', () => {
  it('is refused without the four methods, naming what is missing', async () => {
    await expect(open('./never-created', { logger: { info() {} } as never })).rejects.toThrow(InvalidArgumentError)
    await expect(open('./never-created', { logger: { info() {} } as never })).rejects.toThrow(/debug, warn, error/)
    await expect(open('./never-created', { logger: 'console' as never })).rejects.toThrow(/got console/)
  })
})
