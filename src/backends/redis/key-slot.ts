/**
 * The Redis Cluster slot of a key: CRC16 (XMODEM) of the key, or of its hash tag (the text between
 * the first `{` and the next `}`, when not empty), modulo 16384 — as the Cluster specification
 * defines it. Lets the backend find which node a partition's keys live on.
 */
const TABLE = (() => {
  const t = new Uint16Array(256)
  for (let i = 0; i < 256; i++) {
    let c = i << 8
    for (let k = 0; k < 8; k++) c = c & 0x8000 ? ((c << 1) ^ 0x1021) & 0xffff : (c << 1) & 0xffff
    t[i] = c
  }
  return t
})()

function crc16(bytes: Uint8Array): number {
  let crc = 0
  for (const b of bytes) crc = ((crc << 8) & 0xffff) ^ (TABLE[((crc >> 8) ^ b) & 0xff] as number)
  return crc
}

/** The slot (0..16383) of `key`. */
export function keySlot(key: string): number {
  let bytes = Buffer.from(key, 'utf8')
  const open = bytes.indexOf(0x7b) // {
  if (open >= 0) {
    const close = bytes.indexOf(0x7d, open + 1) // }
    if (close > open + 1) bytes = bytes.subarray(open + 1, close)
  }
  return crc16(bytes) % 16384
}
