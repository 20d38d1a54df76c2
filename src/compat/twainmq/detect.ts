import { readdirSync } from 'node:fs'
import { TWC_EXT } from './twc-config.js'

/**
 * Whether `root` holds Python TwainMQ topics: any `<name>.twc` config (group topics included).
 * A missing or unreadable root holds none. Synchronous: `open()` asks once.
 */
export function isTwainmqRoot(root: string): boolean {
  try {
    return readdirSync(root).some((n) => n.endsWith(TWC_EXT) && n.length > TWC_EXT.length)
  } catch {
    return false
  }
}
