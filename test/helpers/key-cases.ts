// Key cases shared by the unit tests of the codecs and hash and the integration tests that send
// the same keys through a real topic.
import type { Key, KeyType } from '../../src/index.js'

export const U64_MAX = (1n << 64n) - 1n

/** The partition counts of the golden table. */
export const PARTITIONS = [2, 3, 4, 8, 16]

/** DESIGN §7 golden values: key → partition for 2, 3, 4, 8, 16 partitions. */
export const GOLDEN: Array<[Key, number[]]> = [
  [1, [1, 1, 1, 5, 5]],
  [42, [0, 0, 2, 2, 2]],
  [1000, [1, 2, 3, 7, 7]],
  ['user-1', [1, 1, 3, 7, 15]],
]

/** Valid keys per key type, including the extremes. */
export const VALID: Array<[KeyType, Key[]]> = [
  ['u8', [0, 1, 127, 255]],
  ['u16', [0, 1, 256, 65535]],
  ['u32', [0, 65536, 2 ** 31, 2 ** 32 - 1]],
  ['u64', [0n, 1n, 2n ** 32n, 2n ** 53n + 1n, 2n ** 63n, U64_MAX]],
  ['char4', ['', 'a', 'abcd', 'é', 'éé', '€', '😀']],
  ['char12', ['user-1', 'ñandú', '日本語', 'ab€€cd']],
  ['string', ['', 'x', 'user-1', 'ünïcødé 😀 日本', 'a'.repeat(5000)]],
]
