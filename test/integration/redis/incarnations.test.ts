// The incarnation lists of Redis partitions (decision 112): where a list now differs from the one
// a reader saw, the log was written anew from that incarnation's first offset.
import { describe, expect, it } from 'vitest'
import { newIncarnationFrom } from '../../../src/backends/redis/incarnations.js'

describe('newIncarnationFrom', () => {
  it('a list that only grew, or did not change, has no new incarnation below its end', () => {
    expect(newIncarnationFrom('tc:0 aaaaaaaaaaaa:0', 'tc:0 aaaaaaaaaaaa:0')).toBeUndefined()
    expect(newIncarnationFrom('tc:0 aaaaaaaaaaaa:0', 'tc:0 aaaaaaaaaaaa:0 bbbbbbbbbbbb:40')).toBe(40)
  })
  it('a restored older list with the server after the restore: that server’s first offset', () => {
    expect(newIncarnationFrom('tc:0 aaaaaaaaaaaa:0 bbbbbbbbbbbb:40', 'tc:0 aaaaaaaaaaaa:0 cccccccccccc:25')).toBe(25)
  })
  it('a topic created again: its first incarnation differs, from offset 0', () => {
    expect(newIncarnationFrom('tc:0 aaaaaaaaaaaa:0', 'td:0 aaaaaaaaaaaa:0')).toBe(0)
  })
  it('lists cut to their last 16 are aligned on the oldest one still listed', () => {
    const seen = Array.from({ length: 16 }, (_, i) => `${String(i).padStart(12, '0')}:${i * 10}`)
    const now = [...seen.slice(1), `${'f'.repeat(12)}:160`]
    expect(newIncarnationFrom(seen.join(' '), now.join(' '))).toBe(160)
    expect(newIncarnationFrom(seen.join(' '), seen.slice(1).join(' '))).toBeUndefined()
  })
  it('nothing listed now: no incarnation to compare (the end tells)', () => {
    expect(newIncarnationFrom('tc:0', '')).toBeUndefined()
  })
})
