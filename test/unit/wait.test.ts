// The tests' one way to wait (test/helpers/wait.ts): `until` waits on observable state, and a state
// that cannot be read for a moment (a Cluster node promoting a replica answers "no master") is not
// yet the state waited for, not a failure.
import { describe, expect, it } from 'vitest'
import { until } from '../helpers/wait.js'

describe('until', () => {
  it('polls past a check that throws while the state is in between', async () => {
    let calls = 0
    await until(() => {
      calls++
      if (calls < 3) throw new Error('no master serves slot 11694')
      return true
    }, 5_000)
    expect(calls).toBe(3)
  })

  it('names what it waited for and the last failure when time runs out', async () => {
    await expect(
      until(
        () => {
          throw new Error('no master serves slot 7')
        },
        50,
        'the new master',
      ),
    ).rejects.toThrow(/Timed out after 50 ms waiting for the new master \(last check failed: no master serves slot 7\)/)
  })

  it('rejects with what it waited for when the check stays false', async () => {
    await expect(until(() => false, 30, 'nothing')).rejects.toThrow('Timed out after 30 ms waiting for nothing')
  })
})
