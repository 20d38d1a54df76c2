// The age column of `twainmq groups describe`: how old the oldest message not committed is, for people.
import { describe, expect, it } from 'vitest'
import { formatAge, offsetsTable } from '../../src/cli/groups-describe.js'

describe('groups describe: lag age', () => {
  it('formats ages in the largest two units', () => {
    expect(formatAge(0)).toBe('0s')
    expect(formatAge(42)).toBe('42ms')
    expect(formatAge(4_200)).toBe('4.2s')
    expect(formatAge(59_949)).toBe('59.9s')
    expect(formatAge(60_000)).toBe('1m00s')
    expect(formatAge(187_000)).toBe('3m07s')
    expect(formatAge(5 * 3_600_000 + 2 * 60_000 + 59_000)).toBe('5h02m')
    expect(formatAge(2 * 86_400_000 + 3 * 3_600_000)).toBe('2d03h')
  })

  it('puts it after lag, right-aligned', () => {
    const rows = offsetsTable([
      { topic: 'orders', partition: 0, committed: 12, end: 12, lag: 0, lagMs: 0 },
      { topic: 'orders', partition: 1, committed: 2, end: 9, lag: 7, lagMs: 187_000 },
    ])
    expect(rows).toEqual([
      'topic   partition  committed  end  lag    age',
      'orders          0         12   12    0     0s',
      'orders          1          2    9    7  3m07s',
    ])
  })
})
