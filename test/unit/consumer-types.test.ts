// The public types of consumers (issue 10): `Consumer` and `SharedConsumer` show their API, not the
// methods their messages settle through (`ack(m)`, `nack(m, ms)`, `term(m, reason)`, `release(m)`).
// Checked with the TypeScript compiler: snippets against the public entry, and the declarations
// `npm run build` would emit for the consumer classes.
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { beforeAll, describe, expect, it } from 'vitest'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const virtualDir = join(root, '__consumer_types__')

const header = `
import { open, type GroupMessage } from '../src/index.js'
const twain = await open('./unused')
const c = twain.consumer<string>('t', { group: 'g' })
const s = twain.consumer<string>('t', { group: 'g', mode: 'shared' })
declare const m: GroupMessage<string>
void m, c, s
`
const snippets: Record<string, string> = {
  public: `${header}
const polled: GroupMessage<string> | undefined = c.poll() ?? s.poll()
const many: GroupMessage<string>[] = [...c.pollMany(2), ...s.pollMany(2)]
void polled, many
await Promise.all([c.commit(), s.commit(), c.rebalance(), s.rebalance()])
c.seek('t', 0, 0)
const parts: Array<{ topic: string; partition: number }> = [...c.assignments(), ...s.assignments()]
void parts
const off = c.on('error', (e: Error) => void e)
off()
void c.group, c.memberId, s.name, c.topics
for await (const x of c) x.ack()
await c.close()
await s[Symbol.asyncDispose]()
`,
}
const internal = ['ack(m)', 'nack(m, 0)', 'term(m, "r")', 'release(m)']
for (const call of internal) {
  for (const who of ['c', 's']) snippets[`internal-${who}-${call.replace(/\W.*/, '')}`] = `${header}\n${who}.${call}\n`
}

let diagnostics: Map<string, string[]>
let declarations: Map<string, string>

beforeAll(() => {
  const config = ts.getParsedCommandLineOfConfigFile(
    join(root, 'tsconfig.json'),
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined },
  )
  if (!config) throw new Error('cannot read tsconfig.json')
  const options: ts.CompilerOptions = {
    ...config.options,
    noEmit: false,
    declaration: true,
    emitDeclarationOnly: true,
    declarationMap: false,
    sourceMap: false,
  }
  const files = new Map(Object.entries(snippets).map(([name, text]) => [join(virtualDir, `${name}.ts`), text]))
  const host = ts.createCompilerHost(options)
  const { fileExists, readFile, getSourceFile } = host
  host.fileExists = (f) => files.has(f) || fileExists.call(host, f)
  host.readFile = (f) => files.get(f) ?? readFile.call(host, f)
  host.getSourceFile = (f, lang, onError, create) => {
    const text = files.get(f)
    return text !== undefined
      ? ts.createSourceFile(f, text, lang, true)
      : getSourceFile.call(host, f, lang, onError, create)
  }
  const consumerFiles = [
    'consumer/partitioned/consumer.ts',
    'consumer/shared/shared-consumer.ts',
    'stream/message-stream.ts',
  ].map((f) => join(root, 'src', f))
  const program = ts.createProgram({ rootNames: [...files.keys(), ...consumerFiles], options, host })
  diagnostics = new Map()
  for (const f of files.keys()) {
    const list = ts
      .getPreEmitDiagnostics(program, program.getSourceFile(f))
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))
    diagnostics.set(f.slice(virtualDir.length + 1, -3), list)
  }
  declarations = new Map()
  for (const f of consumerFiles) {
    program.emit(
      program.getSourceFile(f),
      (name, text) => declarations.set(name.replace(/.*\//, ''), text),
      undefined,
      true,
    )
  }
}, 60_000)

describe('consumer types', () => {
  it('the public API of both consumers type-checks', () => {
    expect(diagnostics.get('public')).toEqual([])
  })

  it.each(
    internal.flatMap((call) =>
      ['c', 's'].map((who) => [
        who === 'c' ? 'Consumer' : 'SharedConsumer',
        call,
        `internal-${who}-${call.replace(/\W.*/, '')}`,
      ]),
    ),
  )('%s has no public %s', (_kind, call, name) => {
    const errors = diagnostics.get(name) ?? []
    expect(errors, errors.join(' | ')).toHaveLength(1)
    expect(errors[0]).toMatch(new RegExp(`Property '${call.replace(/\W.*/, '')}' does not exist`))
  })

  it('the emitted declarations name no settle methods', () => {
    expect([...declarations.keys()].sort()).toEqual(['consumer.d.ts', 'message-stream.d.ts', 'shared-consumer.d.ts'])
    for (const [file, text] of declarations) {
      for (const name of ['ack', 'nack', 'term', 'release'])
        expect(text, file).not.toMatch(new RegExp(`^\\s*(private |protected )?${name}\\b`, 'm'))
      expect(text, file).not.toMatch(/implements (Shared)?Settler/)
    }
  })

  it('the emitted declarations of both consumers and their stream show only the public API', () => {
    // The parts (member core, ledger, coordination, commits, reads) are `#private` fields: none of
    // their members, and no protected or TypeScript-private member, shows in the published types.
    for (const [file, text] of declarations) {
      expect(text, file).not.toMatch(/^\s*(protected|private)\b/m)
      expect(text, file).not.toMatch(/\bextends (MemberCore|MemberStream|PartitionedLedger|SharedLedger)\b/)
    }
  })
})
