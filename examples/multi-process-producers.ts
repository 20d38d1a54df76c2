// Several processes append to one partition at once; every message gets a unique, dense offset.
// Run: npx tsx examples/multi-process-producers.ts
import { fork } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { open } from 'twainmq'

const PROCESSES = 4
const PER_PROCESS = 500

if (process.argv[2] === 'child') {
  const [, , , dir, id] = process.argv
  const twain = await open(dir!)
  const producer = twain.producer<string>('events')
  for (let i = 0; i < PER_PROCESS; i += 50) {
    await producer.sendBatch(Array.from({ length: 50 }, (_, j) => ({ key: Number(id), value: `p${id}-${i + j}` })))
  }
  await twain.close()
} else {
  const dir = mkdtempSync(join(tmpdir(), 'twainmq-multi-'))
  const twain = await open(dir)
  await twain.createTopic('events', { keyType: 'u8' })
  const children = Array.from({ length: PROCESSES }, (_, id) =>
    fork(process.argv[1]!, ['child', dir, String(id)], { execArgv: process.execArgv }),
  )
  await Promise.all(children.map((c) => new Promise((resolve) => c.on('exit', resolve))))

  const offsets: number[] = []
  for await (const m of twain.history('events')) offsets.push(m.offset)
  const dense = offsets.every((o, i) => o === i)
  console.log(`${PROCESSES} processes wrote ${offsets.length} messages; offsets dense and unique: ${dense}`)
  await twain.close()
  rmSync(dir, { recursive: true, force: true })
  if (!dense || offsets.length !== PROCESSES * PER_PROCESS) process.exit(1)
}
