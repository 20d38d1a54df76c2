import { fstatSync, readdirSync, readFileSync, readlinkSync, writeSync } from 'node:fs'

/** How often the readers of a stdout pipe are looked at (a `readlink` each). */
const PIPE_CHECK_MS = 250

/** The part of a libuv stream handle used here (Node's `socket._handle`). */
interface StreamHandle {
  readStart(): number
  readStop(): number
  onread: unknown
}

/** True when a zero-byte write says the peer of a socket is gone (EPIPE); false for a half-closed one. */
function stdoutPeerGone(): boolean {
  try {
    writeSync(1, Buffer.alloc(0))
    return false
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPIPE'
  }
}

/**
 * A socket (how Node, and other libuv programs, connect a child's stdout): read from it, which no
 * one else does, so its end is noticed at once; then tell a closed peer (EPIPE on a zero-byte
 * write) from one that only shut down its sending side (still reading, so not gone).
 */
function watchSocket(onGone: () => void): () => void {
  const handle = (process.stdout as unknown as { _handle?: StreamHandle })._handle
  if (typeof handle?.readStart !== 'function') return () => undefined
  const previous = handle.onread
  handle.onread = () => {
    if (stdoutPeerGone()) onGone()
  }
  if (handle.readStart() !== 0) {
    handle.onread = previous
    return () => undefined
  }
  return () => {
    handle.readStop()
    handle.onread = previous
  }
}

const readlinkOr = (path: string): string => {
  try {
    return readlinkSync(path)
  } catch {
    return ''
  }
}

/** `/proc/<pid>/fd/<n>` of every other process that has the pipe `link` (`pipe:[inode]`) open for reading. */
function pipeReaders(link: string): string[] {
  const found: string[] = []
  for (const pid of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(pid) || Number(pid) === process.pid) continue
    let fds: string[]
    try {
      fds = readdirSync(`/proc/${pid}/fd`)
    } catch {
      continue // gone, or not ours to look at
    }
    for (const n of fds) {
      if (readlinkOr(`/proc/${pid}/fd/${n}`) !== link) continue
      let info = ''
      try {
        info = readFileSync(`/proc/${pid}/fdinfo/${n}`, 'utf8')
      } catch {
        continue
      }
      const flags = /^flags:\s*([0-7]+)/m.exec(info)
      // O_ACCMODE 3, O_WRONLY 1: anything else can read.
      if (flags && (parseInt(flags[1]!, 8) & 3) !== 1) found.push(`/proc/${pid}/fd/${n}`)
    }
  }
  return found
}

/**
 * A pipe (`twainmq tail t | head -n 2`): nothing in Node can wait for its reader to go away, and a
 * zero-byte write to a pipe always succeeds, so on Linux its readers are looked up in /proc (once
 * at the start, before anything is written, so they are all still there) and watched. Only readers
 * seen going away count: when this process sees none (another user's, another pid namespace's),
 * nothing is watched and the next write's EPIPE tells. A reader that leaves prompts a new look,
 * for readers it handed the pipe to.
 */
function watchPipe(ino: number, onGone: () => void): () => void {
  const link = `pipe:[${ino}]`
  let known: string[]
  try {
    known = pipeReaders(link)
  } catch {
    return () => undefined // no /proc
  }
  if (known.length === 0) return () => undefined
  const timer = setInterval(() => {
    if (known.every((p) => readlinkOr(p) === link)) return
    known = pipeReaders(link)
    if (known.length > 0) return
    clearInterval(timer)
    onGone()
  }, PIPE_CHECK_MS)
  timer.unref()
  return () => clearInterval(timer)
}

/**
 * Call `onGone` (at most once) when nobody reads stdout any more, even while nothing is written to
 * it: a closed socket peer, or (Linux) a pipe whose readers all exited. On other outputs (terminals,
 * files) and platforms it never fires; writes still see EPIPE. Returns a function that stops
 * watching; it must be called (a watched socket keeps the process alive). Not for commands that
 * read stdin: a socket that is both stdin and stdout would lose input to the watch.
 */
export function watchStdoutReader(onGone: () => void): () => void {
  let fired = false
  const once = () => {
    if (fired) return
    fired = true
    onGone()
  }
  let st
  try {
    st = fstatSync(1)
  } catch {
    return () => undefined
  }
  if (st.isSocket()) return watchSocket(once)
  if (st.isFIFO() && process.platform === 'linux') return watchPipe(st.ino, once)
  return () => undefined
}
