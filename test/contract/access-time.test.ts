/**
 * Backend contract, `markAccess`/`lastAccess`: a topic's last access, the same for every
 * instance over the store (the gateway's sliding TTLs across processes). The last call wins, a
 * missing topic is ignored, and a topic created again starts with none. A store with no place for
 * it (a Python TwainMQ root) takes the marks and keeps none.
 */
import { describe, expect, it } from 'vitest'
import { topicMeta } from './fixture.js'
import { kinds, perTest } from './kinds.js'

describe.each(kinds())('$name: access times', (kind) => {
  kind.hooks()
  const ctx = perTest(kind)

  it('a mark is seen by another instance; the last mark wins; none for a missing or re-created topic', async () => {
    const a = await ctx.fresh()
    const b = await ctx.open()
    await a.createTopic(topicMeta('t'))
    expect(await a.lastAccess('t')).toBeUndefined()
    const t1 = Date.now() - 5000
    await a.markAccess('t', t1)
    if (!kind.caps.accessTimes) {
      expect(await b.lastAccess('t')).toBeUndefined()
      return
    }
    expect(Math.abs((await b.lastAccess('t'))! - t1)).toBeLessThan(1)
    const t2 = t1 + 1234
    await b.markAccess('t', t2)
    expect(Math.abs((await a.lastAccess('t'))! - t2)).toBeLessThan(1)
    await a.markAccess('missing', t2)
    expect(await b.lastAccess('missing')).toBeUndefined()
    expect(await a.listTopics()).toEqual(['t'])
    await a.deleteTopic('t')
    await a.createTopic(topicMeta('t'))
    expect(await b.lastAccess('t')).toBeUndefined()
  })
})
