// Whether something accepts TCP connections on a loopback port (servers started by tests and benches).
import { createConnection } from 'node:net'

export const canConnect = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const s = createConnection({ host: '127.0.0.1', port })
    s.once('connect', () => {
      s.destroy()
      resolve(true)
    })
    s.once('error', () => resolve(false))
  })
