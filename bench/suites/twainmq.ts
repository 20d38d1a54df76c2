/*
 * `npm run bench -- twainmq`: the Python TwainMQ 0.1.9 format against the native format and against
 * a plain python3 re-creation of TwainMQ's per-message work, in one run.
 *
 *   native       producer.sendBatch(1000) into a native topic; for await (twain.history())
 *   twainmq-v1   the same into a TwainMQ-format topic (base85 lines, canonical raw deflate, day chunks)
 *   python3      TwainMQ's write_message per message, re-created with the stdlib (key_to_base85,
 *                partition_hash64, encode_datetime, zlib.compress(6, -15) → b85encode, the active
 *                day-file check, one os.open/O_APPEND write/close); and its consumerlet's poll per
 *                line (readline, b85decode of key/ts/payload, zlib.decompress, fromtimestamp) —
 *                reading the TwainMQ-format file twainmq wrote in the same round, so it also
 *                checks interop. Timed inside python3 (interpreter start-up excluded).
 *
 * Goal (issue 5): native-format produce ≥ 50× the python3 re-creation's messages/s.
 * The TwainMQ-format and python3 phases use min(--messages, 100 000) messages (they are ~100× slower).
 */
import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { open, type Twain } from '../../src/index.js'
import { log, machine, makeValue, revision } from '../lib/report.js'
import { progress } from '../lib/progress.js'
import { MB, fmtInt, fmtNum } from '../lib/stats.js'
import type { Suite, SuiteOptions } from '../lib/suite.js'
import { renderTable } from '../lib/table.js'
import { makeTempDir, removeTempDir } from '../lib/tmp.js'

const CHUNK = 1000
const SLOW_CAP = 100_000
const GOAL = 50

interface Throughput {
  label: string
  messages: number
  seconds: number
  payloadBytes: number
}

const rate = (t: Throughput) => t.messages / t.seconds

function phaseDone(t: Throughput): void {
  log(
    `  ${t.label.padEnd(44)} ${fmtNum(t.seconds, 2).padStart(7)} s  ${fmtInt(rate(t)).padStart(10)} msgs/s  ${fmtNum(t.payloadBytes / MB / t.seconds, 1).padStart(6)} MB/s`,
  )
}

async function write(twain: Twain, topic: string, n: number, value: string, label: string): Promise<Throughput> {
  const producer = twain.producer<string>(topic)
  const bar = progress(label, n)
  const t0 = performance.now()
  for (let i = 0; i < n; i += CHUNK) {
    const m = Math.min(CHUNK, n - i)
    const items = new Array<{ key: number; value: string }>(m)
    for (let j = 0; j < m; j++) items[j] = { key: (i + j) % 65536, value }
    await producer.sendBatch(items)
    if ((i / CHUNK) % 16 === 0) bar.update(i + m)
  }
  await producer.close()
  const seconds = (performance.now() - t0) / 1000
  bar.stop()
  const length = await twain.length(topic)
  if (length !== n) throw new Error(`${topic} holds ${length} messages, expected ${n}`)
  return { label, messages: n, seconds, payloadBytes: n * value.length }
}

async function read(twain: Twain, topic: string, n: number, label: string): Promise<Throughput> {
  const bar = progress(label, n)
  const t0 = performance.now()
  let count = 0
  let payload = 0
  for await (const m of twain.history<string>(topic)) {
    payload += m.value.length
    if ((++count & 0x3fff) === 0) bar.update(count)
  }
  const seconds = (performance.now() - t0) / 1000
  bar.stop()
  if (count !== n) throw new Error(`read ${count} messages of ${topic}, expected ${n}`)
  return { label, messages: count, seconds, payloadBytes: payload }
}

/**
 * TwainMQ 0.1.9's per-message work, stdlib only (its module cannot be imported on Linux): the
 * bodies of TwainMQProducer.write_message / encode_message / _active_file, key_to_base85,
 * encode_datetime, atomic_append (POSIX branch), and TwainMQConsumerlet.poll / decode_message,
 * base85_to_key, decode_datetime, as in its sources.
 */
const PYTHON = String.raw`
import base64, json, os, struct, sys, time, zlib
from collections import namedtuple
from dataclasses import is_dataclass
from datetime import datetime, timezone
mode, n, size, path = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'
value = ''.join(alphabet[(i * 7) % len(alphabet)] for i in range(size))
_DATACLASS_MAGIC = b"\xFB"
_GZIP_MAGIC = b"\xFC"
MAX_MESSAGE_SIZE = 4096
MessageTuple = namedtuple("MessageTuple", ["offset", "key", "timestamp", "message"])

def chunk_str_now():
    return f"{datetime.now(timezone.utc):%Y%m%d}"

def key_to_base85(k, width):
    if width < 0:
        b = k.encode("utf-8").ljust(-width, b"\0")
    else:
        b = k.to_bytes(width, byteorder="big", signed=False)
    return base64.b85encode(b).decode("ascii")

def base85_to_key(s, width):
    b = base64.b85decode(s.encode("ascii"))
    return b.rstrip(b"\0").decode("utf-8") if width < 0 else int.from_bytes(b, byteorder="big", signed=False)

def encode_datetime(dt):
    ts = dt.astimezone(timezone.utc).timestamp()
    return base64.b85encode(struct.pack("!d", ts)).decode("utf-8")

def decode_datetime(s):
    return datetime.fromtimestamp(struct.unpack("!d", base64.b85decode(s.encode("utf-8")))[0])

def partition_hash64(x, partitions):
    if isinstance(x, str):
        x = int.from_bytes(x.encode("utf-8"), "big", signed=False)
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
    x = (x ^ (x >> 27)) * 0x94d049bb133111eb
    x = x ^ (x >> 31)
    return x % partitions

def atomic_append(p, data):
    fd = os.open(p, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        if os.write(fd, data) != len(data):
            raise OSError("short write")
    finally:
        os.close(fd)

class Producer:
    def __init__(self):
        self.key_width, self._n_partitions = 2, 1
        self._active_files, self._chunk_str = {0: path}, chunk_str_now()
    def encode_message(self, message):
        if is_dataclass(message):
            raise NotImplementedError
        elif isinstance(message, bytes):
            payload = _GZIP_MAGIC + message
        else:
            payload = message.encode("utf-8")
        compressed = zlib.compress(payload, level=6, wbits=-15)
        return base64.b85encode(compressed).decode("utf-8")
    def write_message(self, key, message):
        encoded_key = key_to_base85(key, self.key_width)
        partition = partition_hash64(key, self._n_partitions)
        timestamp = encode_datetime(datetime.now(timezone.utc))
        msg_blob = self.encode_message(message)
        binary_msg = f"{encoded_key}{timestamp}{msg_blob}\n".encode("utf-8")
        if len(binary_msg) > MAX_MESSAGE_SIZE:
            raise ValueError("too long")
        atomic_append(self._active_file(partition), binary_msg)
    def _active_file(self, partition):
        if chunk_str_now() != self._chunk_str:
            self._chunk_str = chunk_str_now()
        return self._active_files[partition]

class Consumerlet:
    def __init__(self):
        self._key_width, self._key_chars, self._offset = 2, 3, 0
        self._chunk_str = chunk_str_now()
        self._current_file_handle = open(path, "r", encoding="utf-8")
    def decode_message(self, message):
        compressed = base64.b85decode(message.encode("utf-8"))
        decoded = zlib.decompress(compressed, wbits=-15)
        if decoded.startswith(_GZIP_MAGIC):
            return decoded[1:]
        elif decoded.startswith(_DATACLASS_MAGIC):
            raise NotImplementedError
        return decoded.decode("utf-8")
    def poll(self):
        msg_line = self._current_file_handle.readline()[:-1]
        if msg_line == "":
            if chunk_str_now() == self._chunk_str:
                return None
        key = base85_to_key(msg_line[:self._key_chars], self._key_width)
        timestamp = decode_datetime(msg_line[self._key_chars:self._key_chars+10])
        message = self.decode_message(msg_line[self._key_chars+10:])
        msg_tuple = MessageTuple(offset=self._offset, key=key, timestamp=timestamp, message=message)
        self._offset += 1
        return msg_tuple

if mode == "write":
    producer = Producer()
    t0 = time.perf_counter()
    for i in range(n):
        producer.write_message(i % 65536, value)
    print(json.dumps({"seconds": time.perf_counter() - t0, "count": n}))
else:
    consumer = Consumerlet()
    count = 0
    payload = 0
    t0 = time.perf_counter()
    while (m := consumer.poll()) is not None:
        count += 1
        payload += len(m.message)
    print(json.dumps({"seconds": time.perf_counter() - t0, "count": count, "payload": payload}))
`

function python(
  mode: 'write' | 'read',
  n: number,
  size: number,
  path: string,
): { seconds: number; count: number } | string {
  const r = spawnSync('python3', ['-c', PYTHON, mode, String(n), String(size), path], {
    encoding: 'utf8',
    maxBuffer: 16 * 1024 * 1024,
  })
  if (r.error) return `python3 unavailable: ${r.error.message}`
  if (r.status !== 0) return `python3 failed: ${r.stderr.trim().split('\n').pop()}`
  return JSON.parse(r.stdout) as { seconds: number; count: number }
}

interface Round {
  nativeWrite: Throughput
  nativeRead: Throughput
  tmWrite: Throughput
  tmRead: Throughput
  pyWrite?: Throughput
  pyRead?: Throughput
}

async function round(
  n: number,
  m: number,
  size: number,
  value: string,
  tag: string,
): Promise<{ round: Round; pythonNote?: string }> {
  const root = makeTempDir('twainmq')
  const native = await open(join(root, 'native'))
  const tm = await open(join(root, 'tm'), { format: 'twainmq-v1' })
  try {
    await native.createTopic('t')
    await tm.createTopic('t')
    const r = {} as Round
    phaseDone((r.nativeWrite = await write(native, 't', n, value, `native: sendBatch × ${CHUNK}`)))
    phaseDone((r.nativeRead = await read(native, 't', n, 'native: for await history()')))
    phaseDone((r.tmWrite = await write(tm, 't', m, value, `twainmq-v1: sendBatch × ${CHUNK}`)))
    phaseDone((r.tmRead = await read(tm, 't', m, 'twainmq-v1: for await history()')))
    const pyFile = join(root, 'python-0-19700101_0.tmf')
    const w = python('write', m, size, pyFile)
    if (typeof w === 'string') return { round: r, pythonNote: w }
    phaseDone(
      (r.pyWrite = {
        label: 'python3: write_message (one append each)',
        messages: w.count,
        seconds: w.seconds,
        payloadBytes: w.count * size,
      }),
    )
    const ours = readdirSync(join(root, 'tm', 't'))
      .filter((f) => f.endsWith('.tmf'))
      .sort()
    if (ours.length !== 1)
      return {
        round: r,
        pythonNote: `expected one chunk file, found ${ours.join(', ')} (a UTC day roll-over during the run?)`,
      }
    const rd = python('read', m, size, join(root, 'tm', 't', ours[0] as string))
    if (typeof rd === 'string') return { round: r, pythonNote: rd }
    if (rd.count !== m) throw new Error(`python3 read ${rd.count} lines of the file twainmq wrote, expected ${m}`)
    phaseDone(
      (r.pyRead = {
        label: "python3: consumerlet poll (twainmq's file)",
        messages: rd.count,
        seconds: rd.seconds,
        payloadBytes: rd.count * size,
      }),
    )
    void tag
    return { round: r }
  } finally {
    await native.close()
    await tm.close()
    removeTempDir(root)
  }
}

const median = (xs: Throughput[]): Throughput =>
  [...xs].sort((a, b) => a.seconds / a.messages - b.seconds / b.messages)[(xs.length - 1) >> 1] as Throughput

async function run(opts: SuiteOptions): Promise<void> {
  const n = opts.messages
  const m = Math.min(n, SLOW_CAP)
  const value = makeValue(opts.size)
  const py = spawnSync('python3', ['--version'], { encoding: 'utf8' })
  log('twainmq bench: twainmq (Python TwainMQ 0.1.9 format)')
  log(`command: ${opts.command}`)
  log(`date:    ${new Date().toISOString()}`)
  log(
    `machine: ${machine()}, ${py.status === 0 ? py.stdout.trim() : 'no python3'}, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  )
  log(`source:  ${revision()}`)
  log(
    `setup:   ${opts.repeat} round(s); native ${fmtInt(n)} messages, twainmq-v1 and python3 ${fmtInt(m)} messages; ${opts.size} B string values, u16 keys, 1 partition, fsync 'never'`,
  )
  log('')
  log('phases:')
  const rounds: Round[] = []
  let note: string | undefined
  for (let r = 1; r <= opts.repeat; r++) {
    log(`  round ${r} of ${opts.repeat}:`)
    const res = await round(n, m, opts.size, value, `[${r}/${opts.repeat}]`)
    rounds.push(res.round)
    note ??= res.pythonNote
  }
  const pick = (k: keyof Round) => {
    const xs = rounds.map((r) => r[k]).filter((x): x is Throughput => x !== undefined)
    return xs.length ? median(xs) : undefined
  }
  const rows: Array<[Throughput | undefined, Throughput | undefined]> = [
    [pick('nativeWrite'), pick('pyWrite')],
    [pick('tmWrite'), pick('pyWrite')],
    [pick('pyWrite'), undefined],
    [pick('nativeRead'), pick('pyRead')],
    [pick('tmRead'), pick('pyRead')],
    [pick('pyRead'), undefined],
  ]
  log('')
  log(`throughput, median of ${opts.repeat} round(s) (MB/s = value bytes):`)
  const table: string[][] = [['phase', 'messages', 'seconds', 'msgs/s', 'MB/s', '× python3']]
  for (const [t, base] of rows) {
    if (!t) continue
    table.push([
      t.label,
      fmtInt(t.messages),
      fmtNum(t.seconds, 2),
      fmtInt(rate(t)),
      fmtNum(t.payloadBytes / MB / t.seconds, 1),
      base ? `${fmtNum(rate(t) / rate(base), 1)}×` : '(python3)',
    ])
  }
  log(renderTable(table, [false, true, true, true, true, true]))
  log('')
  if (note) log(`python3 phases skipped: ${note}`)
  const pw = pick('pyWrite')
  const goals: Array<[string, boolean, string]> = []
  // The goal ratio per round (both sides measured back to back, in the same machine state), then its median.
  const perRound = rounds.filter((r) => r.pyWrite).map((r) => rate(r.nativeWrite) / rate(r.pyWrite as Throughput))
  if (perRound.length) {
    const med = [...perRound].sort((a, b) => a - b)[(perRound.length - 1) >> 1] as number
    log(
      `native produce / python3 produce, per round: ${perRound.map((x) => `${fmtNum(x, 1)}×`).join(', ')} (median ${fmtNum(med, 1)}×)`,
    )
    log('')
    goals.push([
      `native-format produce ≥ ${GOAL}× python3 re-creation`,
      med >= GOAL,
      `${fmtNum(med, 1)}× (median of per-round ratios)`,
    ])
  }
  const tw = pick('tmWrite')
  if (tw && pw)
    goals.push(['twainmq-v1 produce faster than python3', rate(tw) > rate(pw), `${fmtNum(rate(tw) / rate(pw), 1)}×`])
  const pr = pick('pyRead')
  if (pr)
    goals.push(['python3 reads every line twainmq wrote', pr.messages === m, `${fmtInt(pr.messages)} / ${fmtInt(m)}`])
  if (goals.length)
    log(renderTable([['goal', 'result', 'measured'], ...goals.map(([g, ok, x]) => [g, ok ? 'PASS' : 'MISS', x])]))
}

const suite: Suite = {
  name: 'twainmq',
  description: 'Python TwainMQ format: write/read vs the native format and vs a python3 re-creation of TwainMQ',
  run,
}
export default suite
