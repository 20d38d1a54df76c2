// open() on a Redis Cluster it cannot use says why (issue 12): a password required or wrong, or an
// ACL user without the rights twainmq needs, is a ConnectionError naming the server's reason
// (NOAUTH, WRONGPASS, NOPERM), not "Connection is closed.", and it is not retriable.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { open } from '../../../src/index.js'
import { openFailure } from '../../helpers/open-failure.js'
import { RedisCluster } from '../../helpers/redis-cluster.js'
import { until } from '../../helpers/wait.js'

let cluster: RedisCluster
const hosts = (): string => cluster.nodes.map((n) => `127.0.0.1:${n.port}`).join(',')

beforeAll(async () => {
  cluster = await RedisCluster.start({ password: 'sekret' })
  for (const n of cluster.nodes)
    await cluster.admin(n).call('ACL', 'SETUSER', 'elsewhere', 'on', '>pw', '~other:*', '+@all')
}, 60_000)
afterAll(async () => {
  await cluster?.destroy()
})

describe('open() of a Redis Cluster says why it cannot connect', () => {
  it('no password: NOAUTH, not retriable', async () => {
    const e = await openFailure(`redis+cluster://${hosts()}`)
    expect(e.message).toMatch(/requires a password \(NOAUTH\)/)
    expect(e.retriable).toBe(false)
  })

  it('a wrong password: WRONGPASS, not retriable, the password not in the message', async () => {
    const e = await openFailure(`redis+cluster://:wrong@${hosts()}`)
    expect(e.message).toMatch(/wrong user name or password \(WRONGPASS\)/)
    expect(e.message).not.toContain('wrong@')
    expect(e.retriable).toBe(false)
  })

  it('an ACL user that may not touch the prefix: NOPERM at open, not retriable', async () => {
    const e = await openFailure(`redis+cluster://elsewhere:pw@${hosts()}`)
    expect(e.message).toMatch(/NOPERM/)
    expect(e.retriable).toBe(false)
  })

  it('the right password works', async () => {
    const twain = await open(`redis+cluster://:sekret@${hosts()}`, { prefix: 'x:' })
    try {
      await twain.createTopic('t', { partitions: 3 })
      await twain.producer<string>('t').send(1, 'v')
      const values: string[] = []
      for await (const m of twain.history<string>('t')) values.push(m.value)
      expect(values).toEqual(['v'])
      // A tail's blocking connections authenticate too (they are opened per node, tail-lanes.ts).
      const tail = twain.tail<string>('t')[Symbol.asyncIterator]()
      const next = tail.next()
      const blocked = async (): Promise<number> => {
        let n = 0
        for (const m of await cluster.masters())
          n += String(await cluster.admin(m).client('LIST'))
            .split('\n')
            .filter((l) => / cmd=xread /.test(l)).length
        return n
      }
      await until(async () => (await blocked()) > 0, 10_000, 'the tail blocked in XREAD')
      await twain.producer<string>('t').send(2, 'w')
      expect((await next).value.value).toBe('w')
      await tail.return?.()
    } finally {
      await twain.close()
    }
  })
})
